package io.flinkdevices.job.batch;

import org.apache.flink.annotation.PublicEvolving;

import java.io.Serializable;
import java.math.BigDecimal;
import java.time.Duration;

/**
 * The numbers of a batching operator, checked when made: records per batch, batches in flight
 * (slots), how long a partial batch may wait before it is sent anyway, and how long one call of the
 * backend may take ({@link #withBackendTimeout}).
 *
 * <p>A value out of range throws one {@link IllegalArgumentException} that names the argument, the
 * allowed range and the value as given, for example {@code batch size must be 1 to 1048576 records,
 * but is 0} or {@code batch timeout must be 1 ms to 1 h (3600000 ms), but is 0.999 ms (PT0.000999S)}.
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

    /**
     * Default backend timeout: longer than the samples' own bounded waits (60 s), so that a
     * backend's own message, naming its device's error, comes first; far below Flink's default
     * checkpoint timeout (10 min).
     */
    public static final Duration DEFAULT_BACKEND_TIMEOUT = Duration.ofMinutes(2);

    private final int batchSize;
    private final int slots;
    private final long timeoutMillis;
    private final long backendTimeoutMillis;

    private BatchSettings(int batchSize, int slots, Duration timeout, Duration backendTimeout) {
        this.batchSize = checkBatchSize(batchSize);
        this.slots = checkSlots(slots);
        this.timeoutMillis = checkTimeout(timeout).toMillis();
        this.backendTimeoutMillis = checkRange("backend timeout", backendTimeout).toMillis();
    }

    /**
     * Settings of {@code batchSize} records per batch, {@code slots} batches in flight and a
     * partial batch flushed after {@code timeout}.
     *
     * @throws IllegalArgumentException naming the first argument out of range and its range
     */
    public static BatchSettings of(int batchSize, int slots, Duration timeout) {
        return new BatchSettings(batchSize, slots, timeout, DEFAULT_BACKEND_TIMEOUT);
    }

    /** The same with the {@link #DEFAULT_TIMEOUT}. */
    public static BatchSettings of(int batchSize, int slots) {
        return new BatchSettings(batchSize, slots, DEFAULT_TIMEOUT, DEFAULT_BACKEND_TIMEOUT);
    }

    /**
     * These settings with the backend timeout {@code backendTimeout}, {@link #MIN_TIMEOUT} to
     * {@link #MAX_TIMEOUT} ({@link #DEFAULT_BACKEND_TIMEOUT} unless set): the longest {@link
     * DeviceBatchOperator} waits for one call of its backend (opening it, {@code start}, {@code
     * finish}, {@code close}) before it fails the task with a {@link BatchFailedException} saying so.
     *
     * @throws IllegalArgumentException naming the argument, its range and the value as given
     */
    public BatchSettings withBackendTimeout(Duration backendTimeout) {
        return new BatchSettings(batchSize, slots, Duration.ofMillis(timeoutMillis), backendTimeout);
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

    /** The longest the operator waits for one call of its backend ({@link #withBackendTimeout}). */
    public Duration backendTimeout() {
        return Duration.ofMillis(backendTimeoutMillis);
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
        return checkRange("batch timeout", timeout);
    }

    private static Duration checkRange(String what, Duration d) {
        if (d == null || d.compareTo(MIN_TIMEOUT) < 0 || d.compareTo(MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException(
                    what + " must be 1 ms to 1 h (3600000 ms), but is " + (d == null ? "missing" : asGiven(d)));
        }
        return d;
    }

    /**
     * {@code d} in milliseconds with every digit it has, then its ISO form where that says more:
     * {@code 0.999 ms (PT0.000999S)}, {@code 3600000.000001 ms (PT1H0.000000001S)}; never rounded to a
     * value that looks allowed, and without the overflow of {@link Duration#toMillis()}.
     */
    static String asGiven(Duration d) {
        BigDecimal ms = BigDecimal.valueOf(d.getSeconds()).scaleByPowerOfTen(3).add(BigDecimal.valueOf(d.getNano(), 6));
        String text = ms.stripTrailingZeros().toPlainString() + " ms";
        return d.getNano() % 1_000_000 == 0 ? text : text + " (" + d + ")";
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
        return "batches of " + batchSize + " records, " + slots + " in flight, flushed after " + timeoutMillis
                + " ms, backend calls bounded by " + backendTimeoutMillis + " ms";
    }
}
