package io.flinkdevices.job.batch;

import org.apache.flink.annotation.PublicEvolving;

import java.io.Serializable;
import java.time.Duration;

/**
 * The three numbers of a batching operator, checked when made: records per batch, batches in
 * flight (slots) and how long a partial batch may wait before it is sent anyway.
 *
 * <p>A value out of range throws one {@link IllegalArgumentException} that names the argument and
 * the allowed range, for example {@code batch size must be 1 to 1048576 records, but is 0}.
 */
@PublicEvolving
public final class BatchSettings implements Serializable {

    private static final long serialVersionUID = 1L;

    /** The largest batch: 1 Mi records (a 1 KiB record makes 1 GiB per buffer). */
    public static final int MAX_BATCH_SIZE = 1 << 20;

    /** The most batches in flight; more buys nothing once copies in, compute and copies out overlap. */
    public static final int MAX_SLOTS = 16;

    /** The shortest flush timeout. */
    public static final Duration MIN_TIMEOUT = Duration.ofMillis(1);

    /** The longest flush timeout. */
    public static final Duration MAX_TIMEOUT = Duration.ofHours(1);

    /** Default flush timeout: a partial batch waits at most this long for more records. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(100);

    private final int batchSize;
    private final int slots;
    private final long timeoutMillis;

    private BatchSettings(int batchSize, int slots, Duration timeout) {
        this.batchSize = checkBatchSize(batchSize);
        this.slots = checkSlots(slots);
        this.timeoutMillis = checkTimeout(timeout).toMillis();
    }

    /**
     * Settings of {@code batchSize} records per batch, {@code slots} batches in flight and a
     * partial batch flushed after {@code timeout}.
     *
     * @throws IllegalArgumentException naming the first argument out of range and its range
     */
    public static BatchSettings of(int batchSize, int slots, Duration timeout) {
        return new BatchSettings(batchSize, slots, timeout);
    }

    /** The same with the {@link #DEFAULT_TIMEOUT}. */
    public static BatchSettings of(int batchSize, int slots) {
        return new BatchSettings(batchSize, slots, DEFAULT_TIMEOUT);
    }

    /** Records per batch, 1 to {@link #MAX_BATCH_SIZE}. */
    public int batchSize() {
        return batchSize;
    }

    /** Batches in flight, 1 to {@link #MAX_SLOTS} (1: synchronous). */
    public int slots() {
        return slots;
    }

    /** How long a partial batch waits for more records. */
    public Duration timeout() {
        return Duration.ofMillis(timeoutMillis);
    }

    /** {@link #timeout()} in milliseconds. */
    public long timeoutMillis() {
        return timeoutMillis;
    }

    /**
     * Returns {@code batchSize} when it is 1 to {@link #MAX_BATCH_SIZE}.
     *
     * @throws IllegalArgumentException naming the argument and the range
     */
    public static int checkBatchSize(int batchSize) {
        if (batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
            throw new IllegalArgumentException(
                    "batch size must be 1 to " + MAX_BATCH_SIZE + " records, but is " + batchSize);
        }
        return batchSize;
    }

    /**
     * Returns {@code slots} when it is 1 to {@link #MAX_SLOTS}.
     *
     * @throws IllegalArgumentException naming the argument and the range
     */
    public static int checkSlots(int slots) {
        if (slots < 1 || slots > MAX_SLOTS) {
            throw new IllegalArgumentException(
                    "slots (batches in flight) must be 1 to " + MAX_SLOTS + ", but is " + slots);
        }
        return slots;
    }

    /**
     * Returns {@code timeout} when it is {@link #MIN_TIMEOUT} to {@link #MAX_TIMEOUT}.
     *
     * @throws IllegalArgumentException naming the argument and the range
     */
    public static Duration checkTimeout(Duration timeout) {
        if (timeout == null || timeout.compareTo(MIN_TIMEOUT) < 0 || timeout.compareTo(MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException(
                    "batch timeout must be 1 ms to 1 h (3600000 ms), but is "
                            + (timeout == null ? "missing" : timeout.toMillis() + " ms"));
        }
        return timeout;
    }

    /**
     * Checks that {@code batchSize} records of {@code recordBytes} fit one direct buffer.
     *
     * @throws IllegalArgumentException naming both and the limit
     */
    public static void checkBufferSize(int batchSize, int recordBytes, String which) {
        if (recordBytes < 1 || (long) batchSize * recordBytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    which + " record size must be at least 1 byte and batch size x record size at most "
                            + Integer.MAX_VALUE + " bytes, but is " + batchSize + " x " + recordBytes);
        }
    }

    @Override
    public String toString() {
        return "batches of " + batchSize + " records, " + slots + " in flight, flushed after " + timeoutMillis + " ms";
    }
}
