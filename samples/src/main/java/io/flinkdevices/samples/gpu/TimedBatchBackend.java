package io.flinkdevices.samples.gpu;

import io.flinkdevices.job.batch.BatchBackend;
import io.flinkdevices.job.batch.ForwardingBatchBackend;

import org.apache.flink.api.common.accumulators.LongCounter;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * A backend whose records, wall time and the task thread's CPU time inside {@code start} and
 * {@code finish} add up in accumulators (the CPU time says what the path costs where other work
 * shares the cores).
 */
final class TimedBatchBackend extends ForwardingBatchBackend {

    private final LongCounter records;
    private final LongCounter nanos;
    private final LongCounter cpuNanos;
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();

    TimedBatchBackend(BatchBackend backend, LongCounter records, LongCounter nanos, LongCounter cpuNanos) {
        super(backend);
        this.records = records;
        this.nanos = nanos;
        this.cpuNanos = cpuNanos;
    }

    @Override
    public void start(int slot, int n) throws Exception {
        long t = System.nanoTime();
        long c = threads.getCurrentThreadCpuTime();
        super.start(slot, n);
        cpuNanos.add(threads.getCurrentThreadCpuTime() - c);
        nanos.add(System.nanoTime() - t);
        records.add(n);
    }

    @Override
    public int finish(int slot) throws Exception {
        long t = System.nanoTime();
        long c = threads.getCurrentThreadCpuTime();
        int written = super.finish(slot);
        cpuNanos.add(threads.getCurrentThreadCpuTime() - c);
        nanos.add(System.nanoTime() - t);
        return written;
    }
}
