package io.flinkdevices.samples.rdma;

import io.flinkdevices.samples.BatchingOperator;
import io.flinkdevices.sdk.info.DeviceSelection;
import io.flinkdevices.sdk.info.RdmaInfo;

import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;

/**
 * Enriches events with their key's vector from the table server, {@code batch} keys per lookup,
 * and emits each event with its {@link FeatureTable#score}. Two batches are in play: while the
 * server answers one, the operator emits the other; before a watermark, a checkpoint barrier and at
 * the end of input both are finished, so nothing is in flight across a checkpoint. At open the subtask takes its RDMA port
 * with {@link DeviceSelection#forSubtask} from {@code getExternalResourceInfos(resourceName)} and
 * reads the table by RDMA where it can ({@link RdmaTransport}); otherwise it looks up over TCP and
 * says once why. A lookup that fails (server unreachable, too slow, gone mid-batch) fails the task
 * with the server's name, so Flink restarts it from the last checkpoint.
 *
 * <p>Accumulators: {@code records}, {@code lookups} (batches), {@code nanos-lookup} (waiting for
 * the server), {@code nanos-operator} (all the operator's time on records), {@code subtasks-rdma},
 * {@code subtasks-tcp}, {@code restarted-subtasks} (opened on an attempt after the first).
 */
public final class EnrichOperator extends BatchingOperator<Event, Event> {

    private static final long serialVersionUID = 1L;

    private final String resourceName;
    private final String host;
    private final int port;
    private final int dim;
    private final int batchSize;
    private final Duration timeout;

    private transient LookupClient client;
    /** Two batches: one filling (or just sent), the other sent and not yet received. */
    private transient Batch[] batches;
    private transient int filling;
    private transient int inFlight;
    private transient LongCounter records;
    private transient LongCounter lookups;
    private transient LongCounter nanosLookup;
    private transient LongCounter nanosOperator;
    private transient boolean inElement;

    /**
     * @param resourceName the external resource holding the RDMA ports, such as {@code rdma}
     * @param host the table server
     * @param port its TCP port
     */
    public EnrichOperator(String resourceName, String host, int port, int dim, int batchSize, Duration timeout) {
        if (batchSize < 1 || batchSize > TableProtocol.MAX_BATCH) {
            throw new IllegalArgumentException("batch must be 1 to " + TableProtocol.MAX_BATCH + " but is " + batchSize);
        }
        this.resourceName = resourceName;
        this.host = host;
        this.port = port;
        this.dim = dim;
        this.batchSize = batchSize;
        this.timeout = timeout;
    }

    @Override
    public void open() throws Exception {
        super.open();
        int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        if (getRuntimeContext().getTaskInfo().getAttemptNumber() > 0) {
            getRuntimeContext().getLongCounter("restarted-subtasks").add(1);
        }
        RdmaInfo rdma =
                DeviceSelection.forSubtask(getRuntimeContext().getExternalResourceInfos(resourceName), subtask, RdmaInfo::from)
                        .orElse(null);
        RdmaTransport.Opened opened = RdmaTransport.open(rdma, host, port, dim, batchSize, timeout);
        String reason = null;
        if (opened.client != null) {
            client = opened.client;
            getRuntimeContext().getLongCounter("subtasks-rdma").add(1);
        } else {
            reason = opened.reason;
            client = TcpLookupClient.connect(host, port, dim, timeout);
            getRuntimeContext().getLongCounter("subtasks-tcp").add(1);
        }
        System.out.println("EnrichmentJob subtask " + subtask + ": " + client.describe()
                + (reason == null ? "" : ", because " + reason) + "; batches of " + batchSize + " keys");
        batches = new Batch[] {new Batch(batchSize, dim), new Batch(batchSize, dim)};
        filling = 0;
        inFlight = -1;
        records = getRuntimeContext().getLongCounter("records");
        lookups = getRuntimeContext().getLongCounter("lookups");
        nanosLookup = getRuntimeContext().getLongCounter("nanos-lookup");
        nanosOperator = getRuntimeContext().getLongCounter("nanos-operator");
    }

    @Override
    public void processElement(StreamRecord<Event> element) {
        long start = System.nanoTime();
        inElement = true;
        try {
            Batch b = batches[filling];
            Event e = element.getValue();
            b.pending[b.count] = e;
            b.keys[b.count++] = e.key;
            if (b.count == batchSize) {
                sendFilling();
            }
        } finally {
            inElement = false;
            nanosOperator.add(System.nanoTime() - start);
        }
    }

    /**
     * Sends the filling batch; then receives and emits the batch sent before it, so that the server
     * answers one batch while the operator emits the other.
     */
    private void sendFilling() {
        Batch b = batches[filling];
        if (b.count == 0) {
            return;
        }
        long start = System.nanoTime();
        try {
            client.send(b.keys, b.count);
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
        nanosLookup.add(System.nanoTime() - start);
        lookups.add(1);
        records.add(b.count);
        if (inFlight >= 0) {
            receiveAndEmit(inFlight);
        }
        inFlight = filling;
        filling = 1 - filling;
    }

    private void receiveAndEmit(int slot) {
        Batch b = batches[slot];
        long start = System.nanoTime();
        try {
            client.receive(b.count, b.vectors);
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
        nanosLookup.add(System.nanoTime() - start);
        for (int k = 0; k < b.count; k++) {
            Event e = b.pending[k];
            e.score = FeatureTable.score(b.vectors, k * dim, dim, e.value);
            output.collect(new StreamRecord<>(e));
            b.pending[k] = null;
        }
        b.count = 0;
    }

    /** Sends the partial batch and receives both: nothing is in flight afterwards (watermark, barrier, end). */
    @Override
    protected void flush() {
        long start = System.nanoTime();
        sendFilling();
        if (inFlight >= 0) {
            receiveAndEmit(inFlight);
            inFlight = -1;
        }
        // a flush from processElement is inside that call's timing already
        if (!inElement) {
            nanosOperator.add(System.nanoTime() - start);
        }
    }

    /** One batch's events, keys and the vectors that come back for them. */
    private static final class Batch {
        final Event[] pending;
        final long[] keys;
        final float[] vectors;
        int count;

        Batch(int size, int dim) {
            pending = new Event[size];
            keys = new long[size];
            vectors = new float[size * dim];
        }
    }

    @Override
    protected void closeDevice() {
        if (client != null) {
            client.close();
            client = null;
        }
    }

    @Override
    public String toString() {
        return "EnrichOperator{" + host + ":" + port + ", batch " + batchSize + "}";
    }
}
