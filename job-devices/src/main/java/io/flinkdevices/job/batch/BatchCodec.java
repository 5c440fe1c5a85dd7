package io.flinkdevices.job.batch;

import org.apache.flink.annotation.PublicEvolving;

import java.io.Serializable;
import java.nio.ByteBuffer;

/**
 * How records enter a device batch and how results leave it: the only code a job author writes
 * for {@link DeviceBatchOperator} besides the device itself.
 *
 * <p>{@link #encode} writes record {@code i} of a batch at byte {@code offset = i *
 * inputRecordBytes} of the slot's input buffer; {@link #decode} reads result {@code i} at {@code
 * offset = i * outputRecordBytes} of the slot's output buffer and makes the record to emit, given
 * the original record (for its key, id or other fields the device never sees). Both use absolute
 * gets and puts; the buffers are direct and in native byte order.
 *
 * <p>Two optional steps for devices that want more than one fixed-size row per record:
 *
 * <ul>
 *   <li>{@link #rows}: a record may take several consecutive rows of a batch (a block of a
 *       sensor's samples, a small matrix). Record {@code i}'s {@code offset} in {@code encode} and
 *       {@code decode} is then its first row's ({@code firstRow * inputRecordBytes}, {@code
 *       firstRow * outputRecordBytes}); a record is never split across batches (a batch that has
 *       no room left for it is started first), and the batch size counts rows.
 *   <li>{@link #encodeBatch}: a batch-level encode, called once per batch after its last {@code
 *       encode} and before the device starts on it, to lay the batch out as a whole (group rows by
 *       key, put per-key state the device needs in front of them).
 * </ul>
 *
 * <p>A codec that keeps state from batch to batch (a filter's history per key) implements {@link
 * StatefulBatchCodec} so that the state is checkpointed and restored.
 *
 * <p>The operator holds each input record until its result is emitted, so with object reuse
 * enabled the operator before it must emit a new object per record (as a source or a map that
 * builds its output does).
 *
 * @param <IN> the records in
 * @param <OUT> the records out
 */
@PublicEvolving
public interface BatchCodec<IN, OUT> extends Serializable {

    /** Writes {@code record} into {@code input} at byte {@code offset}. */
    void encode(IN record, ByteBuffer input, int offset);

    /** The record to emit for {@code record}, from its result in {@code output} at byte {@code offset}. */
    OUT decode(IN record, ByteBuffer output, int offset);

    /**
     * Rows of a batch the record takes, from 1 to the batch size; 1 unless overridden. Called once
     * per record, before {@link #encode}.
     */
    default int rows(IN record) {
        return 1;
    }

    /**
     * Lays out the whole batch: called once per batch after the {@link #encode} of its last
     * record and before the device starts on it, with the slot's input buffer and the rows the
     * batch holds. The input buffer is the task's until then; this may rewrite any of it. Nothing
     * unless overridden.
     */
    default void encodeBatch(ByteBuffer input, int rows) {}
}
