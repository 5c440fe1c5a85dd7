package io.flinkdevices.job.batch;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.Meter;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

class BatchMetricsTest {

    /** Keeps what is registered, by its name under the group's prefix. */
    private static final class Recording extends UnregisteredMetricsGroup {
        final Map<String, Metric> metrics;
        final String prefix;

        Recording(Map<String, Metric> metrics, String prefix) {
            this.metrics = metrics;
            this.prefix = prefix;
        }

        @Override
        public MetricGroup addGroup(String name) {
            return new Recording(metrics, prefix + name + ".");
        }

        @Override
        public <C extends Counter> C counter(String name, C counter) {
            metrics.put(prefix + name, counter);
            return counter;
        }

        @Override
        public Counter counter(String name) {
            return counter(name, new org.apache.flink.metrics.SimpleCounter());
        }

        @Override
        public <T, G extends Gauge<T>> G gauge(String name, G gauge) {
            metrics.put(prefix + name, gauge);
            return gauge;
        }

        @Override
        public <H extends Histogram> H histogram(String name, H histogram) {
            metrics.put(prefix + name, histogram);
            return histogram;
        }

        @Override
        public <M extends Meter> M meter(String name, M meter) {
            metrics.put(prefix + name, meter);
            return meter;
        }
    }

    @Test
    @DisplayName("the operator's group shows batches, records, batch fill, in-flight depth and latency")
    void figures() throws Exception {
        Map<String, Metric> m = new HashMap<>();
        BatchMetrics metrics = BatchMetrics.register(new Recording(m, ""));
        RecordingBackend backend = new RecordingBackend(4, 2);
        Batcher<Long, Long> b = new Batcher<>(backend, new LongCodec(), (r, ts) -> {}, metrics);
        for (long i = 0; i < 10; i++) {
            b.add(i, Batcher.NO_TIMESTAMP);
        }
        assertThat(((Gauge<?>) m.get("batch.inFlight")).getValue()).isEqualTo(1);
        b.drain();
        assertThat(m).containsKeys("batch.batches", "batch.records", "batch.recordsPerSecond",
                "batch.recordsPerBatch", "batch.inFlight", "batch.latencyMillis");
        assertThat(((Counter) m.get("batch.batches")).getCount()).isEqualTo(3);
        assertThat(((Counter) m.get("batch.records")).getCount()).isEqualTo(10);
        assertThat(((Gauge<?>) m.get("batch.inFlight")).getValue()).isEqualTo(0);
        Histogram perBatch = (Histogram) m.get("batch.recordsPerBatch");
        assertThat(perBatch.getCount()).isEqualTo(3);
        assertThat(perBatch.getStatistics().getMax()).isEqualTo(4);
        assertThat(perBatch.getStatistics().getMin()).isEqualTo(2);
        assertThat(((Histogram) m.get("batch.latencyMillis")).getCount()).isEqualTo(3);
    }
}
