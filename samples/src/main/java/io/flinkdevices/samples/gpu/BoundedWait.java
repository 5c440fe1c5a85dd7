package io.flinkdevices.samples.gpu;

import jcuda.driver.CUresult;

import java.util.concurrent.locks.LockSupport;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * Waits for queued CUDA work by polling a query ({@code cuEventQuery}) until it answers anything
 * but {@code CUDA_ERROR_NOT_READY}, or a deadline passes. {@code cuEventSynchronize} cannot be
 * bounded, so it is not used. The first {@link #SPIN_NANOS} are spent spinning, because a batch
 * in flight usually finishes within microseconds of being asked for; after that the thread parks
 * between queries, so a slow device does not burn a core.
 */
final class BoundedWait {

    /** How long to spin before parking between queries. */
    static final long SPIN_NANOS = 1_000_000L;
    /** How long to park between queries after the spin (Linux wakes a little later). */
    static final long PARK_NANOS = 20_000L;

    private BoundedWait() {}

    /**
     * The query's first answer other than {@code CUDA_ERROR_NOT_READY}, or {@code
     * CUDA_ERROR_NOT_READY} when {@code timeoutNanos} passed without one.
     *
     * @throws InterruptedException when the thread is interrupted (Flink cancelling the task)
     */
    static int await(IntSupplier query, long timeoutNanos, LongSupplier nanoClock) throws InterruptedException {
        long start = nanoClock.getAsLong();
        while (true) {
            int rc = query.getAsInt();
            if (rc != CUresult.CUDA_ERROR_NOT_READY) {
                return rc;
            }
            long waited = nanoClock.getAsLong() - start;
            if (waited >= timeoutNanos) {
                return CUresult.CUDA_ERROR_NOT_READY;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while waiting for the GPU");
            }
            if (waited < SPIN_NANOS) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(PARK_NANOS);
            }
        }
    }
}
