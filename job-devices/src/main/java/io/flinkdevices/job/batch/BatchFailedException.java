package io.flinkdevices.job.batch;

import org.apache.flink.annotation.PublicEvolving;

/**
 * A device batch failed in {@link BatchBackend#start} or {@link BatchBackend#finish}, or the
 * backend broke its contract around them (fewer results than records, a buffer shrunk or replaced
 * by a smaller one, a call past the operator's backend timeout): the task fails and Flink's restart
 * strategy takes over (the records of the batches in flight are replayed from the last checkpoint).
 * The message names the device ({@link BatchBackend#describe()}), the call, the batch (counted from
 * 1 in this subtask), the records and the slot, then what went wrong; the cause, when there is one,
 * is the backend's exception.
 */
@PublicEvolving
public final class BatchFailedException extends Exception {

    private static final long serialVersionUID = 1L;

    BatchFailedException(String device, String call, long batch, int slot, int records, Exception cause) {
        this(device, call, batch, slot, records,
                cause.getMessage() == null ? cause.getClass().getName() : cause.getMessage(), cause);
    }

    BatchFailedException(String device, String call, long batch, int slot, int records, String problem,
            Exception cause) {
        super(device + ": " + call + " of batch " + batch + (records > 0 ? " (" + records + " records)" : "")
                + " in slot " + slot + " failed: " + problem, cause);
    }
}
