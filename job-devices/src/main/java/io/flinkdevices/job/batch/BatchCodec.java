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
}
