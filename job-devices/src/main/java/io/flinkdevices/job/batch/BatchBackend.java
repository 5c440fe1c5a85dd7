package io.flinkdevices.job.batch;

import java.nio.ByteBuffer;

/**
 * A device that works on batches of records held in reusable off-heap buffers, with several
 * batches in flight at once: while the device works on one slot's batch (and copies another's
 * results back), the task fills the next slot.
 *
 * <pre>
 *   fill slot 0, start(0)     device: copy in 0, compute 0
 *   fill slot 1, start(1)     device: copy in 1 while copying out 0
 *   finish(0), emit slot 0, fill slot 0 again, start(0) ...
 * </pre>
 *
 * <p>Slots are used round robin by the batcher, so results leave in the order their records came
 * in. A slot's buffers belong to the task between {@link #finish(int)} (or creation) and {@link
 * #start(int, int)}, and to the device from {@code start} until {@code finish} returns. A device
 * that cannot work asynchronously does all its work in {@code start} and returns at once from
 * {@code finish} with the count of results it wrote.
 *
 * <p>Buffers: {@link #input(int)} holds {@link #batchSize()} records of {@link #inputRecordBytes()}
 * bytes each, one after the other; {@link #output(int)} the same for results. Both are direct (for
 * CUDA: page-locked host memory, which asynchronous copies need; a backend that cannot get
 * page-locked memory falls back to pageable buffers and says so once at WARN) and in native byte
 * order. Their position and limit are the task's to use; the backend reads absolute offsets.
 *
 * <p>Errors: {@code start} and {@code finish} throw an exception whose message names the device and
 * the device API's own error name (a CUDA or OpenCL error name, a socket's reason); the task fails
 * and Flink's restart strategy takes over. Neither waits without bound.
 *
 * <p>Not thread-safe: one backend per subtask, every call from the task's thread.
 */
public interface BatchBackend extends AutoCloseable {

    /** Batches that may be in flight at once; at least 1 (1 means synchronous). */
    int slots();

    /** The most records one batch holds. */
    int batchSize();

    /** Bytes of one record in an input buffer. */
    int inputRecordBytes();

    /** Bytes of one result in an output buffer. */
    int outputRecordBytes();

    /** The input buffer of a slot ({@code 0 <= slot < slots()}). */
    ByteBuffer input(int slot);

    /** The output buffer of a slot. */
    ByteBuffer output(int slot);

    /**
     * Starts the device on the first {@code records} records of the slot's input and returns as
     * soon as the work is queued.
     */
    void start(int slot, int records) throws Exception;

    /**
     * Waits, bounded, until the slot's output holds the results of its last {@link #start}, and
     * says how many it wrote there: the {@code records} of that {@code start} when the batch went
     * through (0 for a slot with nothing in flight). The batcher emits results only for a batch
     * whose every result was written: a count that differs from the batch's records fails the
     * task with a {@link BatchFailedException} naming the backend, the slot and the batch, rather
     * than emitting unwritten rows (zeros, or an earlier batch's results) as results.
     *
     * @return the results written into the slot's output buffer
     */
    int finish(int slot) throws Exception;

    /** One line for the log: which device, which path, pinned or pageable buffers. */
    String describe();

    /** Releases the device's memory and the buffers; never throws, safe to call twice. */
    @Override
    void close();
}
