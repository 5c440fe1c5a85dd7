package io.flinkdevices.samples.fpga;

import java.io.Serializable;
import java.time.Duration;

/**
 * How the FIR job batches: records per batch, batches in flight, and how long a batch may take on
 * the device. Checked when built, so that a value that cannot work fails before anything starts,
 * with one message naming the argument and its range.
 */
public final class FirBatchArgs implements Serializable {

    private static final long serialVersionUID = 1L;

    /** Largest batch: 2^20 samples (with 64 taps, 256 MiB of sample area per slot). */
    public static final int MAX_BATCH = 1 << 20;

    /** Most slots (batches in flight). */
    public static final int MAX_SLOTS = 16;

    /** Longest finish timeout: 10 minutes. */
    public static final long MAX_TIMEOUT_MS = 600_000;

    private final int batchSize;
    private final int slots;
    private final long finishTimeoutMs;

    /**
     * @param batchSize records per batch, 1..{@value #MAX_BATCH}
     * @param slots batches in flight, 1..{@value #MAX_SLOTS} (1: synchronous)
     * @param finishTimeoutMs how long {@code finish} waits for one batch, 1..{@value #MAX_TIMEOUT_MS} ms
     * @throws IllegalArgumentException naming the argument ({@code --batch}, {@code --slots}, {@code
     *     --timeout-ms}), the range and the value
     */
    public FirBatchArgs(long batchSize, long slots, long finishTimeoutMs) {
        this.batchSize = (int) check("--batch", batchSize, 1, MAX_BATCH);
        this.slots = (int) check("--slots", slots, 1, MAX_SLOTS);
        this.finishTimeoutMs = check("--timeout-ms", finishTimeoutMs, 1, MAX_TIMEOUT_MS);
    }

    /** The job's defaults: batches of 4096, 3 in flight, 60 s finish timeout. */
    public static FirBatchArgs defaults() {
        return new FirBatchArgs(4096, 3, 60_000);
    }

    static long check(String argument, long value, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(argument + ": expected " + min + ".." + max + ", got " + value);
        }
        return value;
    }

    /** Records per batch. */
    public int batchSize() {
        return batchSize;
    }

    /** Batches in flight. */
    public int slots() {
        return slots;
    }

    /** How long {@code finish} waits for one batch. */
    public Duration finishTimeout() {
        return Duration.ofMillis(finishTimeoutMs);
    }

    /** The same with another batch size. */
    public FirBatchArgs withBatchSize(long batch) {
        return new FirBatchArgs(batch, slots, finishTimeoutMs);
    }

    /** The same with another number of slots. */
    public FirBatchArgs withSlots(long n) {
        return new FirBatchArgs(batchSize, n, finishTimeoutMs);
    }

    /** The same with another finish timeout. */
    public FirBatchArgs withFinishTimeoutMs(long ms) {
        return new FirBatchArgs(batchSize, slots, ms);
    }

    @Override
    public String toString() {
        return "batch " + batchSize + ", " + slots + " slot(s), finish timeout " + finishTimeoutMs + " ms";
    }
}
