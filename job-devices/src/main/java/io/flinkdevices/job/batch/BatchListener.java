package io.flinkdevices.job.batch;

import org.apache.flink.annotation.PublicEvolving;

/**
 * What a {@link Batcher} reports about its batches, for metrics: {@link BatchMetrics} puts them
 * into an operator's metric group. Called on the task's thread; must be cheap.
 */
@PublicEvolving
public interface BatchListener {

    /** Reports nothing. */
    BatchListener NONE = new BatchListener() {
        @Override
        public void started(int records, int inFlight) {}

        @Override
        public void emitted(int records, long latencyNanos) {}
    };

    /** A batch of {@code records} was started; {@code inFlight} batches are in flight now. */
    void started(int records, int inFlight);

    /**
     * The results of a batch of {@code records} were emitted, {@code latencyNanos} after its first
     * record was written into the batch.
     */
    void emitted(int records, long latencyNanos);
}
