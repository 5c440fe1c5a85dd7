package io.flinkdevices.job.batch;

import org.apache.flink.annotation.PublicEvolving;

import java.nio.ByteBuffer;

/**
 * The batching itself, without Flink: encodes records into a {@link BatchBackend}'s slots, starts
 * a slot when it is full, keeps up to {@link BatchBackend#slots()} batches in flight round robin
 * and emits the results in the order their records came in. {@link DeviceBatchOperator} holds one;
 * an operator that needs more (its own state, side outputs) can hold one too.
 *
 * <p>With {@code S} slots: the task fills slot {@code k} while slots {@code k-1 .. k-S+1} are on
 * the device; when it wants to fill a slot that is still in flight it first {@link
 * BatchBackend#finish finishes} that slot (the oldest) and emits its results. So with 2 slots the
 * task fills batch N+1 while the device computes batch N; with 3, the device can also be copying
 * back N-1.
 *
 * <p>Not thread-safe: every call from the task's thread.
 *
 * @param <IN> the records in
 * @param <OUT> the records out
 */
@PublicEvolving
public final class Batcher<IN, OUT> implements AutoCloseable {

    /** Where results go, with the timestamp of their input record. */
    @FunctionalInterface
    public interface Emitter<OUT> {
        /**
         * Emits {@code result}; {@code timestamp} is its input record's, or {@link
         * Batcher#NO_TIMESTAMP}.
         */
        void emit(OUT result, long timestamp) throws Exception;
    }

    /** The timestamp of a record that has none. */
    public static final long NO_TIMESTAMP = Long.MIN_VALUE;

    private final BatchBackend backend;
    private final BatchCodec<IN, OUT> codec;
    private final Emitter<OUT> emitter;
    private final BatchListener listener;
    private final String device;
    private final int slots;
    private final int batchSize;
    private final int inBytes;
    private final int outBytes;
    private final ByteBuffer[] inputs;
    private final ByteBuffer[] outputs;
    private final Object[][] records;
    private final long[][] timestamps;
    /** Per slot and record: the record's first row. */
    private final int[][] firstRows;
    /** Per slot: rows used. */
    private final int[] counts;
    /** Per slot: records in the batch. */
    private final int[] elements;
    private final long[] fillStartNanos;
    /** Per slot: the number of its batch in flight, counted from 1, for messages. */
    private final long[] batchNumbers;
    private long batches;
    private int filling;
    private int inFlight;
    private boolean closed;

    /**
     * A batcher over {@code backend}, which it closes in {@link #close()}.
     *
     * @throws IllegalArgumentException when the backend's slots, batch size or record sizes are
     *     out of range (see {@link BatchSettings})
     */
    public Batcher(BatchBackend backend, BatchCodec<IN, OUT> codec, Emitter<OUT> emitter, BatchListener listener) {
        this.backend = backend;
        this.codec = codec;
        this.emitter = emitter;
        this.listener = listener == null ? BatchListener.NONE : listener;
        this.device = backend.describe();
        this.slots = BatchSettings.checkSlots(backend.slots());
        this.batchSize = BatchSettings.checkBatchSize(backend.batchSize());
        this.inBytes = backend.inputRecordBytes();
        this.outBytes = backend.outputRecordBytes();
        BatchSettings.checkBufferSize(batchSize, inBytes, "input");
        BatchSettings.checkBufferSize(batchSize, outBytes, "output");
        inputs = new ByteBuffer[slots];
        outputs = new ByteBuffer[slots];
        records = new Object[slots][batchSize];
        timestamps = new long[slots][batchSize];
        firstRows = new int[slots][batchSize];
        counts = new int[slots];
        elements = new int[slots];
        fillStartNanos = new long[slots];
        batchNumbers = new long[slots];
        for (int s = 0; s < slots; s++) {
            inputs[s] = checkCapacity(backend.input(s), inBytes, "input", s);
            outputs[s] = checkCapacity(backend.output(s), outBytes, "output", s);
        }
    }

    private ByteBuffer checkCapacity(ByteBuffer b, int recordBytes, String which, int slot) {
        String problem = bufferProblem(b, (long) batchSize * recordBytes);
        if (problem != null) {
            throw new IllegalArgumentException(device + ": the " + which + " buffer of slot " + slot + problem);
        }
        return b;
    }

    /**
     * Why {@code b} cannot hold {@code needed} bytes from offset 0 to its limit, or null. The codec's
     * absolute gets and puts stop at the limit, so a backend that moved the limit (a {@code flip()}
     * after writing) breaks the codec as surely as a smaller buffer would.
     */
    private static String bufferProblem(ByteBuffer b, long needed) {
        if (b == null) {
            return " is missing (null) but a batch needs " + needed + " bytes";
        }
        if (b.capacity() < needed) {
            return " holds " + b.capacity() + " bytes but a batch needs " + needed;
        }
        if (b.limit() < needed) {
            return " has its limit at " + b.limit() + " of " + b.capacity() + " bytes but a batch needs " + needed
                    + " (the buffers' position and limit are the task's: a backend reads and writes absolute offsets"
                    + " and leaves them alone)";
        }
        return null;
    }

    /**
     * Adds a record to the filling batch, taking {@link BatchCodec#rows} rows; when that fills it,
     * starts it, which may first finish the oldest batch in flight and emit its results. A record
     * that does not fit in the rows left starts the filling batch first and goes into the next.
     *
     * @param timestamp the record's timestamp or {@link #NO_TIMESTAMP}
     * @throws IllegalArgumentException when the record takes fewer than 1 or more than {@code
     *     batchSize} rows
     * @throws BatchFailedException when the device fails; the batcher is unusable afterwards
     */
    public void add(IN record, long timestamp) throws Exception {
        int rows = codec.rows(record);
        if (rows < 1 || rows > batchSize) {
            throw new IllegalArgumentException(device + ": a record must take 1 to " + batchSize
                    + " rows (the batch size), but " + codec.getClass().getName() + ".rows gave " + rows);
        }
        if (counts[filling] + rows > batchSize) {
            startFilling();
        }
        int slot = filling;
        int row = counts[slot];
        int e = elements[slot];
        if (e == 0) {
            fillStartNanos[slot] = System.nanoTime();
            refreshInput(slot);
        }
        try {
            codec.encode(record, inputs[slot], row * inBytes);
        } catch (IndexOutOfBoundsException ex) {
            throw new IllegalStateException(device + ": " + codec.getClass().getName() + ".encode wrote past the input"
                    + " buffer of slot " + slot + " (limit " + inputs[slot].limit() + " bytes) for the record at row " + row
                    + " (offset " + (row * inBytes) + "; a row is " + inBytes + " bytes): " + ex.getMessage(), ex);
        }
        records[slot][e] = record;
        timestamps[slot][e] = timestamp;
        firstRows[slot][e] = row;
        elements[slot] = e + 1;
        counts[slot] = row + rows;
        if (row + rows == batchSize) {
            startFilling();
        }
    }

    /**
     * Starts the partial batch, if any, and finishes every batch in flight, emitting all results:
     * nothing is held afterwards (before a checkpoint barrier, a watermark, at the end of input,
     * on the timeout).
     */
    public void drain() throws Exception {
        if (counts[filling] > 0) {
            startFilling();
        }
        while (inFlight > 0) {
            finishOldest();
        }
    }

    /** Rows written or in flight whose results were not emitted yet (records, where each takes one row). */
    public int pending() {
        int n = 0;
        for (int c : counts) {
            n += c;
        }
        return n;
    }

    /** Batches started and not finished. */
    public int inFlight() {
        return inFlight;
    }

    /**
     * {@link System#nanoTime()} when the first record still pending was written, or {@code -1}
     * when nothing is pending: how long the oldest record has waited.
     */
    public long oldestPendingNanos() {
        if (inFlight > 0) {
            return fillStartNanos[Math.floorMod(filling - inFlight, slots)];
        }
        return counts[filling] > 0 ? fillStartNanos[filling] : -1;
    }

    /** The backend's {@link BatchBackend#describe()}. */
    public String describe() {
        return device;
    }

    /**
     * Takes the slot's input buffer from the backend again as a new batch begins: a backend may hand
     * out a new one between batches, and one that shrank or replaced it with a smaller one is
     * refused here with what it did, before a codec's put fails with a bare index error.
     */
    private void refreshInput(int slot) throws BatchFailedException {
        ByteBuffer in = backend.input(slot);
        String problem = bufferProblem(in, (long) batchSize * inBytes);
        if (problem != null) {
            throw new BatchFailedException(device, "fill", batches + 1, slot, 0,
                    "the backend's input buffer of slot " + slot + problem, null);
        }
        inputs[slot] = in;
    }

    private void startFilling() throws Exception {
        int slot = filling;
        int n = counts[slot];
        long batch = ++batches;
        batchNumbers[slot] = batch;
        codec.encodeBatch(inputs[slot], n);
        try {
            backend.start(slot, n);
        } catch (Exception e) {
            throw new BatchFailedException(device, "start", batch, slot, n, e);
        }
        inFlight++;
        listener.started(n, inFlight);
        filling = (slot + 1) % slots;
        if (inFlight == slots) {
            // the next slot to fill is the oldest in flight
            finishOldest();
        }
    }

    @SuppressWarnings("unchecked")
    private void finishOldest() throws Exception {
        int slot = Math.floorMod(filling - inFlight, slots);
        int n = counts[slot];
        long number = batchNumbers[slot];
        int written;
        try {
            written = backend.finish(slot);
        } catch (Exception e) {
            throw new BatchFailedException(device, "finish", number, slot, n, e);
        }
        if (written != n) {
            // rows the device did not write hold zeros or an earlier batch's results: emitting them
            // would checkpoint wrong results as processed
            throw new BatchFailedException(device, "finish", number, slot, n, written < n && written >= 0
                    ? "the backend wrote " + written + " of the batch's " + n + " results; the task fails rather than"
                            + " emit " + (n - written) + " unwritten rows as results"
                    : "the backend reports " + written + " results written, but the batch has " + n + " rows", null);
        }
        inFlight--;
        ByteBuffer out = backend.output(slot);
        String problem = bufferProblem(out, (long) n * outBytes);
        if (problem != null) {
            throw new BatchFailedException(device, "finish", number, slot, n,
                    "the backend's output buffer of slot " + slot + problem, null);
        }
        outputs[slot] = out;
        Object[] batch = records[slot];
        long[] ts = timestamps[slot];
        int[] first = firstRows[slot];
        int count = elements[slot];
        for (int i = 0; i < count; i++) {
            OUT result;
            try {
                result = codec.decode((IN) batch[i], out, first[i] * outBytes);
            } catch (IndexOutOfBoundsException ex) {
                throw new IllegalStateException(device + ": " + codec.getClass().getName() + ".decode read past the"
                        + " output buffer of slot " + slot + " (limit " + out.limit() + " bytes) for the record at row "
                        + first[i] + " (offset " + (first[i] * outBytes) + "; a result is " + outBytes + " bytes): "
                        + ex.getMessage(), ex);
            }
            batch[i] = null;
            emitter.emit(result, ts[i]);
        }
        counts[slot] = 0;
        elements[slot] = 0;
        listener.emitted(n, System.nanoTime() - fillStartNanos[slot]);
    }

    /** Closes the backend once; pending records are dropped (the task is failing or done). */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            backend.close();
        }
    }
}
