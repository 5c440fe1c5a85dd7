package io.flinkdevices.job.batch;

import org.apache.flink.annotation.PublicEvolving;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A {@link BatchBackend} without a device: it fills and drains the same direct buffers a device
 * backend does and does the least work that reads every input byte, so a job run with it measures
 * what the pipeline around a device can move (sources, encoding, batching, decoding, sinks) on any
 * machine. Also the backend of tests of the batching itself.
 *
 * <ul>
 *   <li>{@link Mode#COPY}: each result is its record's bytes, copied;
 *   <li>{@link Mode#CHECKSUM}: each result is 8 bytes, the sum of the record read as native-order
 *       longs (trailing bytes added one by one).
 * </ul>
 *
 * The work happens in {@link #start}; {@link #finish} returns at once with its count.
 */
@PublicEvolving
public final class NoComputeBackend implements BatchBackend {

    /** What a result is. */
    public enum Mode {
        /** The record's bytes. */
        COPY,
        /** An 8-byte sum of the record. */
        CHECKSUM
    }

    private final Mode mode;
    private final int batchSize;
    private final int inBytes;
    private final int outBytes;
    private final ByteBuffer[] inputs;
    private final ByteBuffer[] outputs;
    /** Per slot: the records of its last start, written by then (the work happens in start). */
    private final int[] written;

    private NoComputeBackend(Mode mode, BatchSettings settings, int recordBytes) {
        BatchSettings.checkBufferSize(settings.batchSize(), recordBytes, "input");
        this.mode = mode;
        this.batchSize = settings.batchSize();
        this.inBytes = recordBytes;
        this.outBytes = mode == Mode.COPY ? recordBytes : Long.BYTES;
        inputs = new ByteBuffer[settings.slots()];
        outputs = new ByteBuffer[settings.slots()];
        written = new int[settings.slots()];
        for (int s = 0; s < inputs.length; s++) {
            inputs[s] = direct(batchSize * inBytes);
            outputs[s] = direct(batchSize * outBytes);
        }
    }

    /**
     * A backend of {@code settings.slots()} slots of {@code settings.batchSize()} records of
     * {@code recordBytes} bytes.
     *
     * @throws IllegalArgumentException when a batch would not fit one buffer
     */
    public static NoComputeBackend open(Mode mode, BatchSettings settings, int recordBytes) {
        return new NoComputeBackend(mode, settings, recordBytes);
    }

    /** A factory that opens {@link #open(Mode, BatchSettings, int)} in each subtask. */
    public static BatchBackendFactory factory(Mode mode, int recordBytes) {
        return new Factory(mode, recordBytes);
    }

    private static final class Factory implements BatchBackendFactory {
        private static final long serialVersionUID = 1L;
        private final Mode mode;
        private final int recordBytes;

        Factory(Mode mode, int recordBytes) {
            this.mode = mode;
            this.recordBytes = recordBytes;
        }

        @Override
        public BatchBackend open(BatchSettings settings, org.apache.flink.api.common.functions.RuntimeContext context) {
            return NoComputeBackend.open(mode, settings, recordBytes);
        }
    }

    static ByteBuffer direct(int bytes) {
        return ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    }

    @Override
    public int slots() {
        return inputs.length;
    }

    @Override
    public int batchSize() {
        return batchSize;
    }

    @Override
    public int inputRecordBytes() {
        return inBytes;
    }

    @Override
    public int outputRecordBytes() {
        return outBytes;
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
    public void start(int slot, int records) {
        if (records < 0 || records > batchSize) {
            throw new IllegalArgumentException("records must be 0 to " + batchSize + ", but is " + records);
        }
        ByteBuffer in = inputs[slot];
        ByteBuffer out = outputs[slot];
        written[slot] = 0;
        if (mode == Mode.COPY) {
            ByteBuffer from = in.duplicate();
            from.limit(records * inBytes).position(0);
            ByteBuffer to = out.duplicate();
            to.position(0);
            to.put(from);
        } else {
            for (int i = 0; i < records; i++) {
                out.putLong(i * Long.BYTES, checksum(in, i * inBytes, inBytes));
            }
        }
        written[slot] = records;
    }

    // one call per record rather than one loop per batch: the JIT compiles a method called
    // thousands of times per second at once, where a loop of a whole batch waits for on-stack
    // replacement and runs interpreted until then
    private static long checksum(ByteBuffer in, int base, int bytes) {
        int end = base + bytes;
        int longsEnd = base + (bytes & ~(Long.BYTES - 1));
        long sum = 0;
        for (int at = base; at < longsEnd; at += Long.BYTES) {
            sum += in.getLong(at);
        }
        for (int at = longsEnd; at < end; at++) {
            sum += in.get(at);
        }
        return sum;
    }

    @Override
    public int finish(int slot) {
        int n = written[slot];
        written[slot] = 0;
        return n;
    }

    @Override
    public String describe() {
        return "no-compute backend (" + mode.name().toLowerCase(java.util.Locale.ROOT) + ", " + inputs.length
                + " slots of " + batchSize + " records of " + inBytes + " bytes, direct buffers)";
    }

    @Override
    public void close() {}
}
