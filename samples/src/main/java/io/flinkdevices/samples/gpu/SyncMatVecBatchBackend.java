package io.flinkdevices.samples.gpu;

import io.flinkdevices.job.batch.BatchBackend;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;

/**
 * A synchronous {@link MatVecBackend} (the cuBLAS or kernel path) as a one-slot {@link
 * BatchBackend}: {@link #start} copies the batch into the backend's own buffer and multiplies,
 * {@link #finish} copies the products out. The stopgap until the GPU path has a backend of its own
 * with several slots in flight; the copies are host memory to host memory, small next to the
 * device round trip.
 */
final class SyncMatVecBatchBackend implements BatchBackend {

    private final MatVecBackend backend;
    private final int rows;
    private final int cols;
    private final ByteBuffer input;
    private final ByteBuffer output;
    private int records;

    SyncMatVecBatchBackend(MatVecBackend backend, int rows, int cols) {
        this.backend = backend;
        this.rows = rows;
        this.cols = cols;
        this.input = CpuMatVec.directBytes((long) backend.batchSize() * cols);
        this.output = CpuMatVec.directBytes((long) backend.batchSize() * rows);
    }

    @Override
    public int slots() {
        return 1;
    }

    @Override
    public int batchSize() {
        return backend.batchSize();
    }

    @Override
    public int inputRecordBytes() {
        return cols * Float.BYTES;
    }

    @Override
    public int outputRecordBytes() {
        return rows * Float.BYTES;
    }

    @Override
    public ByteBuffer input(int slot) {
        return input;
    }

    @Override
    public ByteBuffer output(int slot) {
        return output;
    }

    @Override
    public void start(int slot, int n) {
        FloatBuffer from = input.asFloatBuffer();
        backend.input().put(0, from, 0, n * cols);
        backend.multiply(n);
        records = n;
    }

    @Override
    public int finish(int slot) {
        output.asFloatBuffer().put(0, backend.output(), 0, records * rows);
        return records;
    }

    @Override
    public String describe() {
        return backend.describe() + ", one batch in flight";
    }

    @Override
    public void close() {
        backend.close();
    }
}
