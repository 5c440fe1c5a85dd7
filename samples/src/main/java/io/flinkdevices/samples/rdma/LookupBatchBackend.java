package io.flinkdevices.samples.rdma;

import io.flinkdevices.job.batch.BatchBackend;

import org.apache.flink.api.common.accumulators.LongCounter;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The table server as a {@link BatchBackend} with two slots: an input record is a key (a long), a
 * result its vector of {@code dim} floats. {@code start} sends a slot's keys and returns; {@code
 * finish} receives the vectors of the oldest batch sent, so the server answers one batch while the
 * task emits the other. A lookup that fails (server unreachable, too slow, gone mid-batch) throws
 * with the server's name.
 *
 * <p>Accumulators: {@code records}, {@code lookups} (batches) and {@code nanos-lookup} (time in the
 * client's send and receive).
 */
final class LookupBatchBackend implements BatchBackend {

    /** Batches in flight: the clients answer in order, one batch while the next is sent. */
    static final int SLOTS = 2;

    private final LookupClient client;
    private final int dim;
    private final int batchSize;
    private final ByteBuffer[] inputs = new ByteBuffer[SLOTS];
    private final ByteBuffer[] outputs = new ByteBuffer[SLOTS];
    private final long[][] keys = new long[SLOTS][];
    private final float[][] vectors = new float[SLOTS][];
    private final int[] counts = new int[SLOTS];
    private final LongCounter records;
    private final LongCounter lookups;
    private final LongCounter nanosLookup;

    LookupBatchBackend(LookupClient client, int dim, int batchSize, LongCounter records, LongCounter lookups,
            LongCounter nanosLookup) {
        this.client = client;
        this.dim = dim;
        this.batchSize = batchSize;
        this.records = records;
        this.lookups = lookups;
        this.nanosLookup = nanosLookup;
        for (int s = 0; s < SLOTS; s++) {
            inputs[s] = ByteBuffer.allocateDirect(batchSize * Long.BYTES).order(ByteOrder.nativeOrder());
            outputs[s] = ByteBuffer.allocateDirect(batchSize * dim * Float.BYTES).order(ByteOrder.nativeOrder());
            keys[s] = new long[batchSize];
            vectors[s] = new float[batchSize * dim];
        }
    }

    @Override
    public int slots() {
        return SLOTS;
    }

    @Override
    public int batchSize() {
        return batchSize;
    }

    @Override
    public int inputRecordBytes() {
        return Long.BYTES;
    }

    @Override
    public int outputRecordBytes() {
        return dim * Float.BYTES;
    }

    @Override
    public ByteBuffer input(int slot) {
        return inputs[slot];
    }

    @Override
    public ByteBuffer output(int slot) {
        return outputs[slot];
    }

    @Override
    public void start(int slot, int n) throws Exception {
        inputs[slot].asLongBuffer().get(0, keys[slot], 0, n);
        counts[slot] = n;
        long t = System.nanoTime();
        client.send(keys[slot], n);
        nanosLookup.add(System.nanoTime() - t);
        lookups.add(1);
        records.add(n);
    }

    @Override
    public int finish(int slot) throws Exception {
        int n = counts[slot];
        long t = System.nanoTime();
        client.receive(n, vectors[slot]);
        nanosLookup.add(System.nanoTime() - t);
        outputs[slot].asFloatBuffer().put(0, vectors[slot], 0, n * dim);
        return n;
    }

    @Override
    public String describe() {
        return client.describe();
    }

    @Override
    public void close() {
        client.close();
    }
}
