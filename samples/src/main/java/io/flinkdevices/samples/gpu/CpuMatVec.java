package io.flinkdevices.samples.gpu;

import io.flinkdevices.job.batch.BatchBackend;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;

/**
 * The CPU path: the same sums as {@link Matrix#multiplyNaive} in the same order, so its results
 * equal the reference exactly. Used for validation and on hosts without a usable NVIDIA GPU.
 *
 * <p>Also a one-slot {@link BatchBackend} over the same buffers (the job's CPU path, no copy): the
 * products are computed in {@link #start}, {@link #finish} returns at once.
 */
final class CpuMatVec implements MatVecBackend, BatchBackend {

    private final Matrix matrix;
    private final int batchSize;
    private final ByteBuffer inputBytes;
    private final ByteBuffer outputBytes;
    private final FloatBuffer input;
    private final FloatBuffer output;
    private final float[] x;
    private final float[] y;
    /** The results of the last start, written by then (the work happens in start). */
    private int written;

    CpuMatVec(Matrix matrix, int batchSize) {
        this.matrix = matrix;
        this.batchSize = batchSize;
        this.inputBytes = directBytes((long) batchSize * matrix.cols());
        this.outputBytes = directBytes((long) batchSize * matrix.rows());
        this.input = inputBytes.asFloatBuffer();
        this.output = outputBytes.asFloatBuffer();
        this.x = new float[matrix.cols()];
        this.y = new float[matrix.rows()];
    }

    static FloatBuffer direct(long floats) {
        return directBytes(floats).asFloatBuffer();
    }

    static ByteBuffer directBytes(long floats) {
        return ByteBuffer.allocateDirect(Math.toIntExact(floats * Float.BYTES)).order(ByteOrder.nativeOrder());
    }

    @Override
    public Path path() {
        return Path.CPU;
    }

    @Override
    public FloatBuffer input() {
        return input;
    }

    @Override
    public FloatBuffer output() {
        return output;
    }

    @Override
    public int batchSize() {
        return batchSize;
    }

    @Override
    public void multiply(int count) {
        int rows = matrix.rows();
        int cols = matrix.cols();
        float[] a = matrix.rowMajor();
        for (int k = 0; k < count; k++) {
            input.get(k * cols, x, 0, cols);
            for (int r = 0; r < rows; r++) {
                float sum = 0f;
                int base = r * cols;
                for (int c = 0; c < cols; c++) {
                    sum += a[base + c] * x[c];
                }
                y[r] = sum;
            }
            output.put(k * rows, y, 0, rows);
        }
    }

    @Override
    public int slots() {
        return 1;
    }

    @Override
    public int inputRecordBytes() {
        return matrix.cols() * Float.BYTES;
    }

    @Override
    public int outputRecordBytes() {
        return matrix.rows() * Float.BYTES;
    }

    @Override
    public ByteBuffer input(int slot) {
        return inputBytes;
    }

    @Override
    public ByteBuffer output(int slot) {
        return outputBytes;
    }

    @Override
    public void start(int slot, int records) {
        written = 0;
        multiply(records);
        written = records;
    }

    @Override
    public int finish(int slot) {
        int n = written;
        written = 0;
        return n;
    }

    @Override
    public String describe() {
        return "CPU path (" + Runtime.getRuntime().availableProcessors() + " cores visible, one thread per subtask)";
    }

    @Override
    public void close() {}
}
