package io.flinkdevices.job.batch;

import org.apache.flink.api.common.functions.RuntimeContext;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Opens a {@link RecordingBackend} (work between start and finish, as on a device) that fails
 * once, in {@code finish}, at the first batch after {@code failAfterBatches} batches of the run
 * were started and a checkpoint of the run completed: a device error in the middle of a stream,
 * with batches in flight, after a checkpoint to restore from.
 */
final class FailingOnceFactory implements BatchBackendFactory {
    private static final long serialVersionUID = 1L;

    static final ConcurrentHashMap<String, AtomicBoolean> FAILED = new ConcurrentHashMap<>();
    static final ConcurrentHashMap<String, AtomicInteger> STARTS = new ConcurrentHashMap<>();

    private final String run;
    private final int failAfterBatches;

    FailingOnceFactory(String run, int failAfterBatches) {
        this.run = run;
        this.failAfterBatches = failAfterBatches;
    }

    @Override
    public BatchBackend open(BatchSettings settings, RuntimeContext context) {
        AtomicBoolean failed = FAILED.computeIfAbsent(run, k -> new AtomicBoolean());
        AtomicInteger starts = STARTS.computeIfAbsent(run, k -> new AtomicInteger());
        return new RecordingBackend(settings.batchSize(), settings.slots()) {
            @Override
            public void start(int slot, int n) throws Exception {
                starts.incrementAndGet();
                super.start(slot, n);
            }

            @Override
            public int finish(int slot) throws Exception {
                if (failAfterBatches >= 0
                        && starts.get() > failAfterBatches
                        && CountingSink.CHECKPOINTS.getOrDefault(run, new AtomicInteger()).get() > 0
                        && failed.compareAndSet(false, true)) {
                    throw new Exception("CUDA_ERROR_LAUNCH_FAILED: injected once by the test");
                }
                return super.finish(slot);
            }
        };
    }
}
