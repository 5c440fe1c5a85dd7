package io.flinkdevices.samples.fpga;

import io.flinkdevices.job.batch.BatchBackend;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The FIR filter's CPU path as a {@link BatchBackend}: the kernel of {@code fir.cl} in Java over
 * the same layout ({@link FirLayout}: positions, then the sample area at {@code 4 * batchSize}), so
 * a subtask without a device runs through the same operator, codec and state as one with a device,
 * and its outputs are bit-identical to {@link Fir#filter} (the same float sums in the same order).
 * One slot: all the work happens in {@link #start}.
 */
final class CpuFirBatchBackend implements BatchBackend {

    private final float[] taps;
    private final int batchSize;
    private final String reason;
    private final ByteBuffer input;
    private final ByteBuffer output;
    private final int[] positions;
    private final float[] samples;
    private final float[] results;
    /** The results of the last start, written by then (the work happens in start). */
    private int written;

    /** @param reason why the subtask takes the CPU path, for {@link #describe()} */
    CpuFirBatchBackend(float[] taps, int batchSize, String reason) {
        this.taps = taps.clone();
        this.batchSize = batchSize;
        this.reason = reason;
        int area = Math.multiplyExact(batchSize, taps.length);
        this.input = ByteBuffer.allocateDirect(Math.addExact(FirCodec.samplesOffset(batchSize), Math.multiplyExact(area, 4)))
                .order(ByteOrder.nativeOrder());
        this.output = ByteBuffer.allocateDirect(Math.multiplyExact(batchSize, 4)).order(ByteOrder.nativeOrder());
        this.positions = new int[batchSize];
        this.samples = new float[area];
        this.results = new float[batchSize];
    }

    @Override
    public int slots() {
        return 1;
    }

    @Override
    public int batchSize() {
        return batchSize;
    }

    /** A position (4 bytes) and room for a segment of {@code taps} samples, as on the device. */
    @Override
    public int inputRecordBytes() {
        return 4 + 4 * taps.length;
    }

    @Override
    public int outputRecordBytes() {
        return 4;
    }

    @Override
    public ByteBuffer input(int slot) {
        check(slot);
        return input;
    }

    @Override
    public ByteBuffer output(int slot) {
        check(slot);
        return output;
    }

    private static void check(int slot) {
        if (slot != 0) {
            throw new IndexOutOfBoundsException("slot " + slot + " of 1");
        }
    }

    /** Filters the batch: {@code out[i] = sum_k taps[k] * in[pos[i] - k]}, summed from {@code k = 0}. */
    @Override
    public void start(int slot, int records) {
        check(slot);
        if (records < 1 || records > batchSize) {
            throw new IllegalArgumentException("records must be in 1.." + batchSize + " but is " + records);
        }
        written = 0;
        input.duplicate().order(ByteOrder.nativeOrder()).asIntBuffer().get(0, positions, 0, records);
        int used = 0;
        for (int i = 0; i < records; i++) {
            used = Math.max(used, positions[i] + 1);
        }
        if (used > samples.length) {
            throw new IllegalArgumentException("position " + (used - 1) + " is beyond the sample area of " + samples.length + " samples");
        }
        int offset = FirCodec.samplesOffset(batchSize);
        input.slice(offset, input.capacity() - offset).order(ByteOrder.nativeOrder()).asFloatBuffer().get(0, samples, 0, used);
        float[] h = taps;
        for (int i = 0; i < records; i++) {
            int p = positions[i];
            float acc = 0f;
            for (int k = 0; k < h.length; k++) {
                acc += h[k] * samples[p - k];
            }
            results[i] = acc;
        }
        output.duplicate().order(ByteOrder.nativeOrder()).asFloatBuffer().put(0, results, 0, records);
        written = records;
    }

    @Override
    public int finish(int slot) {
        check(slot);
        int n = written;
        written = 0;
        return n;
    }

    @Override
    public String describe() {
        return "CPU path, because " + reason;
    }

    @Override
    public void close() {}
}
