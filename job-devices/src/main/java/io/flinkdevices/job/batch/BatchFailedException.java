package io.flinkdevices.job.batch;

import org.apache.flink.annotation.PublicEvolving;

/**
 * A device batch failed in {@link BatchBackend#start} or {@link BatchBackend#finish}: the task
 * fails and Flink's restart strategy takes over (the records of the batches in flight are replayed
 * from the last checkpoint). The message names the device ({@link BatchBackend#describe()}), the
 * call, the slot and the records, then the backend's own message; the cause is the backend's
 * exception.
 */
@PublicEvolving
public final class BatchFailedException extends Exception {

    private static final long serialVersionUID = 1L;

    BatchFailedException(String device, String call, int slot, int records, Exception cause) {
        super(device + ": " + call + " of a batch of " + records + " records in slot " + slot + " failed: "
                + (cause.getMessage() == null ? cause.getClass().getName() : cause.getMessage()), cause);
    }
}
