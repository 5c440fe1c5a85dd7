package io.flinkdevices.samples.gpu;

import io.flinkdevices.job.batch.BatchBackend;

import org.apache.flink.api.common.accumulators.LongCounter;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;

/**
 * A backend whose records, wall time and the task thread's CPU time inside {@code start} and
 * {@code finish} add up in accumulators (the CPU time says what the path costs where other work
 * shares the cores).
 */
final class TimedBatchBackend implements BatchBackend {

    private final BatchBackend backend;
    private final LongCounter records;
    private final LongCounter nanos;
    private final LongCounter cpuNanos;
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();

    TimedBatchBackend(BatchBackend backend, LongCounter records, LongCounter nanos, LongCounter cpuNanos) {
        this.backend = backend;
        this.records = records;
        this.nanos = nanos;
        this.cpuNanos = cpuNanos;
    }

    @Override
    public int slots() {
        return backend.slots();
    }

    @Override
    public int batchSize() {
        return backend.batchSize();
    }

    @Override
    public int inputRecordBytes() {
        return backend.inputRecordBytes();
    }

    @Override
    public int outputRecordBytes() {
        return backend.outputRecordBytes();
    }

    @Override
    public ByteBuffer input(int slot) {
        return backend.input(slot);
    }

    @Override
    public ByteBuffer output(int slot) {
        return backend.output(slot);
    }

    @Override
    public void start(int slot, int n) throws Exception {
        long t = System.nanoTime();
        long c = threads.getCurrentThreadCpuTime();
        backend.start(slot, n);
        cpuNanos.add(threads.getCurrentThreadCpuTime() - c);
        nanos.add(System.nanoTime() - t);
        records.add(n);
    }

    @Override
    public void finish(int slot) throws Exception {
        long t = System.nanoTime();
        long c = threads.getCurrentThreadCpuTime();
        backend.finish(slot);
        cpuNanos.add(threads.getCurrentThreadCpuTime() - c);
        nanos.add(System.nanoTime() - t);
    }

    @Override
    public String describe() {
        return backend.describe();
    }

    @Override
    public void close() {
        backend.close();
    }
}
