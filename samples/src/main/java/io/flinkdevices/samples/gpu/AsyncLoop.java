package io.flinkdevices.samples.gpu;

import java.nio.FloatBuffer;

/**
 * {@link MatVecThroughput}'s loop for the asynchronous path, as a batching operator drives a
 * {@link io.flinkdevices.job.batch.BatchBackend}: slots round robin; a slot that comes round again
 * is finished and its products read, then it is filled with the next batch and started, so the
 * host fills one slot while the GPU copies and computes the others.
 */
final class AsyncLoop {

    private AsyncLoop() {}

    /** Fills, starts and finishes batches for {@code seconds} after a warm-up; counts finished records. */
    static MatVecThroughput.Row measure(CudaBatchBackend b, Matrix m, float[][] vectors, double seconds)
            throws InterruptedException {
        int cols = m.cols();
        int rows = m.rows();
        int batch = b.batchSize();
        int slots = b.slots();
        FloatBuffer[] in = new FloatBuffer[slots];
        FloatBuffer[] out = new FloatBuffer[slots];
        for (int s = 0; s < slots; s++) {
            in[s] = b.input(s).asFloatBuffer();
            out[s] = b.output(s).asFloatBuffer();
        }
        int[] lastVector = new int[slots];
        boolean[] busy = new boolean[slots];
        float[] product = new float[rows];
        long deadlineWarm = System.nanoTime() + (long) (seconds * 0.25e9);
        long records = 0;
        long start = 0;
        boolean warm = true;
        int next = 0;
        int slot = 0;
        double maxError = 0;
        try {
            while (true) {
                long now = System.nanoTime();
                if (warm && now >= deadlineWarm) {
                    warm = false;
                    records = 0;
                    start = now;
                } else if (!warm && now - start >= seconds * 1e9) {
                    return new MatVecThroughput.Row(MatVecBackend.Path.GPU, slots, batch, records, now - start, maxError);
                }
                if (busy[slot]) {
                    b.finish(slot);
                    busy[slot] = false;
                    for (int k = 0; k < batch; k++) {
                        out[slot].get(k * rows, product, 0, rows);
                    }
                    records += batch;
                    if (warm) {
                        // Checked during warm-up only: the batch's last product against double precision.
                        double[] exact = m.multiplyExact(vectors[lastVector[slot]]);
                        for (int r = 0; r < rows; r++) {
                            maxError = Math.max(maxError, Math.abs(exact[r] - product[r]));
                        }
                    }
                }
                for (int k = 0; k < batch; k++) {
                    in[slot].put(k * cols, vectors[next], 0, cols);
                    lastVector[slot] = next;
                    next = (next + 1) % vectors.length;
                }
                b.start(slot, batch);
                busy[slot] = true;
                slot = (slot + 1) % slots;
            }
        } finally {
            for (int s = 0; s < slots; s++) {
                if (busy[s]) {
                    b.finish(s);
                }
            }
        }
    }
}
