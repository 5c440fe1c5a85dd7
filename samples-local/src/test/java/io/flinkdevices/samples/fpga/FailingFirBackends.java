package io.flinkdevices.samples.fpga;

import io.flinkdevices.job.batch.BatchBackend;
import io.flinkdevices.job.batch.BatchBackendFactory;
import io.flinkdevices.job.batch.BatchSettings;
import io.flinkdevices.job.batch.ForwardingBatchBackend;

import org.apache.flink.api.common.functions.RuntimeContext;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The FIR job's own backends (OpenCL or CPU path, {@link FirBackends}), failing once in {@code
 * finish} at the first batch after {@code failAfterBatches} batches of the run were started and a
 * checkpoint of the run completed ({@link Trickle}): a device error mid-stream, with batches in
 * flight and a partial batch filling, after a checkpoint to restore from.
 */
final class FailingFirBackends implements BatchBackendFactory {
    private static final long serialVersionUID = 1L;

    static final ConcurrentHashMap<String, AtomicBoolean> FAILED = new ConcurrentHashMap<>();
    static final ConcurrentHashMap<String, AtomicInteger> STARTS = new ConcurrentHashMap<>();

    private final String run;
    private final int failAfterBatches;
    private final FirBackends backends;

    FailingFirBackends(String run, int failAfterBatches, FirBackends backends) {
        this.run = run;
        this.failAfterBatches = failAfterBatches;
        this.backends = backends;
    }

    @Override
    public BatchBackend open(BatchSettings settings, RuntimeContext context) throws Exception {
        AtomicBoolean failed = FAILED.computeIfAbsent(run, k -> new AtomicBoolean());
        AtomicInteger starts = STARTS.computeIfAbsent(run, k -> new AtomicInteger());
        BatchBackend b = backends.open(settings, context);
        return new ForwardingBatchBackend(b) {
            @Override
            public void start(int slot, int records) throws Exception {
                starts.incrementAndGet();
                super.start(slot, records);
            }

            @Override
            public int finish(int slot) throws Exception {
                int written = super.finish(slot);
                if (failAfterBatches >= 0
                        && starts.get() > failAfterBatches
                        && Trickle.checkpointed(run)
                        && failed.compareAndSet(false, true)) {
                    throw new IllegalStateException(b.describe() + ": the batch in slot " + slot
                            + " failed with CL_OUT_OF_RESOURCES (injected once by the test)");
                }
                return written;
            }
        };
    }
}
