package io.flinkdevices.samples.rdma;

import io.flinkdevices.job.batch.BatchCodec;
import io.flinkdevices.job.batch.BatchSettings;
import io.flinkdevices.job.batch.DeviceBatchOperator;

import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * Enriches events with their key's vector from the table server, {@code batch} keys per lookup,
 * and emits each event with its {@link FeatureTable#score}: a {@link DeviceBatchOperator} whose
 * device is the table server ({@link LookupBatchFactory}, {@link LookupBatchBackend}), two batches
 * in flight: while the server answers one, the operator emits the other. Before a watermark, a
 * checkpoint barrier and at the end of input both are finished, so nothing is in flight across a
 * checkpoint; a partial batch also leaves after the timeout. A lookup that fails fails the task
 * with the server's name, so Flink restarts it from the last checkpoint.
 *
 * <p>Accumulators: {@code records}, {@code lookups} (batches), {@code nanos-lookup} (waiting for
 * the server), {@code nanos-operator} (all the operator's time on records), {@code subtasks-rdma},
 * {@code subtasks-tcp}, {@code restarted-subtasks} (opened on an attempt after the first).
 */
public final class EnrichOperator extends DeviceBatchOperator<Event, Event> {

    private static final long serialVersionUID = 1L;

    private transient LongCounter nanosOperator;

    /**
     * @param resourceName the external resource holding the RDMA ports, such as {@code rdma}
     * @param host the table server
     * @param port its TCP port
     * @param batchSize keys per lookup, 1 to 65536
     * @param timeout a lookup's bound, and how long a partial batch waits for more events
     */
    public EnrichOperator(String resourceName, String host, int port, int dim, int batchSize, Duration timeout) {
        super(settings(batchSize, timeout), new LookupBatchFactory(resourceName, host, port, dim, timeout), new Codec(dim));
    }

    private static BatchSettings settings(int batchSize, Duration timeout) {
        if (batchSize < 1 || batchSize > TableProtocol.MAX_BATCH) {
            throw new IllegalArgumentException("batch must be 1 to " + TableProtocol.MAX_BATCH + " but is " + batchSize);
        }
        Duration flush = timeout.compareTo(BatchSettings.MAX_TIMEOUT) > 0 ? BatchSettings.MAX_TIMEOUT : timeout;
        return BatchSettings.of(batchSize, LookupBatchBackend.SLOTS, flush);
    }

    @Override
    public void open() throws Exception {
        super.open();
        nanosOperator = getRuntimeContext().getLongCounter("nanos-operator");
    }

    @Override
    public void processElement(StreamRecord<Event> element) throws Exception {
        long t = System.nanoTime();
        super.processElement(element);
        nanosOperator.add(System.nanoTime() - t);
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        long t = System.nanoTime();
        super.processWatermark(mark);
        nanosOperator.add(System.nanoTime() - t);
    }

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        long t = System.nanoTime();
        super.prepareSnapshotPreBarrier(checkpointId);
        nanosOperator.add(System.nanoTime() - t);
    }

    @Override
    public void endInput() throws Exception {
        long t = System.nanoTime();
        super.endInput();
        nanosOperator.add(System.nanoTime() - t);
    }

    @Override
    public String toString() {
        return "EnrichOperator{" + settings() + "}";
    }

    /** A key into the batch; the event with its score out. */
    static final class Codec implements BatchCodec<Event, Event> {
        private static final long serialVersionUID = 1L;
        private final int dim;

        Codec(int dim) {
            this.dim = dim;
        }

        @Override
        public void encode(Event e, ByteBuffer input, int offset) {
            input.putLong(offset, e.key);
        }

        @Override
        public Event decode(Event e, ByteBuffer output, int offset) {
            e.score = FeatureTable.score(output, offset, dim, e.value);
            return e;
        }
    }
}
