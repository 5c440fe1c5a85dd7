package io.flinkdevices.job.batch;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.Meter;
import org.apache.flink.metrics.MeterView;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;

/**
 * A {@link Batcher}'s figures as Flink metrics, in a subgroup {@code batch} of the group given
 * (the operator's):
 *
 * <ul>
 *   <li>{@code batches} (counter): batches started;
 *   <li>{@code records} (counter) and {@code recordsPerSecond} (meter): records whose results
 *       were emitted (rows, where a codec's record takes several: {@link BatchCodec#rows});
 *   <li>{@code recordsPerBatch} (histogram of the last 1000 batches): how full batches are; far
 *       below the batch size means the timeout or checkpoints flush them;
 *   <li>{@code inFlight} (gauge): batches on the device now;
 *   <li>{@code latencyMillis} (histogram of the last 1000 batches): from a batch's first record
 *       written to its results emitted.
 * </ul>
 */
@PublicEvolving
public final class BatchMetrics implements BatchListener {

    private static final int WINDOW = 1000;

    private final Counter batches;
    private final Counter records;
    private final Histogram recordsPerBatch;
    private final Histogram latencyMillis;
    private volatile int inFlight;

    private BatchMetrics(MetricGroup operatorGroup) {
        MetricGroup group = operatorGroup.addGroup("batch");
        batches = group.counter("batches");
        records = group.counter("records");
        Meter rate = new MeterView(records);
        group.meter("recordsPerSecond", rate);
        recordsPerBatch = group.histogram("recordsPerBatch", new DescriptiveStatisticsHistogram(WINDOW));
        latencyMillis = group.histogram("latencyMillis", new DescriptiveStatisticsHistogram(WINDOW));
        group.gauge("inFlight", () -> inFlight);
    }

    /** Registers the metrics in a subgroup {@code batch} of {@code operatorGroup}. */
    public static BatchMetrics register(MetricGroup operatorGroup) {
        return new BatchMetrics(operatorGroup);
    }

    @Override
    public void started(int n, int nowInFlight) {
        batches.inc();
        recordsPerBatch.update(n);
        inFlight = nowInFlight;
    }

    @Override
    public void emitted(int n, long latencyNanos) {
        records.inc(n);
        latencyMillis.update(latencyNanos / 1_000_000L);
        inFlight = Math.max(0, inFlight - 1);
    }
}
