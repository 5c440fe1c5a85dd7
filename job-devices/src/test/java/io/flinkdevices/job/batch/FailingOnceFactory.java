package io.flinkdevices.job.batch;

import org.apache.flink.api.common.functions.RuntimeContext;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Opens a {@link RecordingBackend} (work between start and finish, as on a device) that fails
 * once, in {@code finish}, at the first batch after {@code failAfterBatches} batches of the run
 * were started and a checkpoint of the run completed: a device error in the middle of a stream,
 * with batches in flight, after a checkpoint to restore from ({@code failAfterBatches} 0: the first
 * finish, without waiting for a checkpoint; -1: never). How it fails: {@link How}.
 */
final class FailingOnceFactory implements BatchBackendFactory {
    private static final long serialVersionUID = 1L;

    /** How the one failing {@code finish} fails. */
    enum How {
        /** Throws, naming a CUDA error. */
        THROWS,
        /** Never returns until {@link #RELEASE} (ignores interrupts, as a native wait does). */
        HANGS,
        /** Writes all but the last result and says so. */
        WRITES_FEWER
    }

    static final ConcurrentHashMap<String, AtomicBoolean> FAILED = new ConcurrentHashMap<>();
    static final ConcurrentHashMap<String, AtomicInteger> STARTS = new ConcurrentHashMap<>();
    /** Ends every hanging finish: counted down by the tests when they are done. */
    static final CountDownLatch RELEASE = new CountDownLatch(1);

    private final String run;
    private final int failAfterBatches;
    private final How how;

    FailingOnceFactory(String run, int failAfterBatches) {
        this(run, failAfterBatches, How.THROWS);
    }

    FailingOnceFactory(String run, int failAfterBatches, How how) {
        this.run = run;
        this.failAfterBatches = failAfterBatches;
        this.how = how;
    }

    private static void hang() {
        while (true) {
            try {
                RELEASE.await();
                return;
            } catch (InterruptedException e) {
                // a native wait does not end on an interrupt either
            }
        }
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
                        && (failAfterBatches == 0 || CountingSink.CHECKPOINTS.getOrDefault(run, new AtomicInteger()).get() > 0)
                        && failed.compareAndSet(false, true)) {
                    if (how == How.THROWS) {
                        throw new Exception("CUDA_ERROR_LAUNCH_FAILED: injected once by the test");
                    }
                    if (how == How.HANGS) {
                        hang();
                    }
                    return super.finish(slot) - 1;
                }
                return super.finish(slot);
            }
        };
    }
}
