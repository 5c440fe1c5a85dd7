package io.flinkdevices.samples.gpu;

import io.flinkdevices.job.batch.BatchBackend;

import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * {@link MatVecThroughput}'s loop for the asynchronous path, as a batching operator drives a
 * {@link BatchBackend}: slots round robin; a slot that comes round again
 * is finished and its products read, then it is filled with the next batch and started, so the
 * host fills one slot while the GPU copies and computes the others.
 */
final class AsyncLoop {

    private AsyncLoop() {}

    /**
     * Opens {@code threads} backends of {@code slots} slots on CUDA device {@code gpuIndex} (as
     * {@code threads} subtasks sharing one GPU would), runs {@link #measure} on each in a thread of
     * its own, all at once, and sums their records; {@code describe} gets the first backend's line.
     *
     * @throws IllegalStateException when a backend does not open or a batch fails, with its message
     */
    static MatVecThroughput.Row measure(
            int gpuIndex, Matrix m, int batch, int slots, int threads, float[][] vectors, double seconds, Consumer<String> describe)
            throws Exception {
        List<CudaBatchBackend> backends = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                backends.add(CudaBatchBackend.open(gpuIndex, m, batch, slots));
            }
            describe.accept(backends.get(0).describe());
            if (threads == 1) {
                return measure(backends.get(0), m, vectors, seconds);
            }
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<MatVecThroughput.Row>> runs = new ArrayList<>();
                for (CudaBatchBackend b : backends) {
                    runs.add(pool.submit(() -> measure(b, m, vectors, seconds)));
                }
                long records = 0;
                long nanos = 0;
                double maxError = 0;
                for (Future<MatVecThroughput.Row> run : runs) {
                    // Each run ends by itself after its warm-up and `seconds`; this bound is only against a hang.
                    MatVecThroughput.Row r = run.get((long) (seconds * 10) + 120, TimeUnit.SECONDS);
                    records += r.records;
                    nanos = Math.max(nanos, r.nanos);
                    maxError = Math.max(maxError, r.maxError);
                }
                return new MatVecThroughput.Row(MatVecBackend.Path.GPU, slots, threads, batch, records, nanos, maxError);
            } catch (ExecutionException e) {
                throw new IllegalStateException(String.valueOf(e.getCause().getMessage()), e.getCause());
            } catch (TimeoutException e) {
                throw new IllegalStateException("a measuring thread did not end in time");
            } finally {
                pool.shutdownNow();
                if (!pool.awaitTermination(seconds > 0 ? (long) seconds * 10 + 60 : 60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("measuring threads did not stop");
                }
            }
        } finally {
            backends.forEach(CudaBatchBackend::close);
        }
    }

    /** Fills, starts and finishes batches for {@code seconds} after a warm-up; counts finished records. */
    static MatVecThroughput.Row measure(BatchBackend b, Matrix m, float[][] vectors, double seconds) throws Exception {
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
                    return new MatVecThroughput.Row(MatVecBackend.Path.GPU, slots, 1, batch, records, now - start, maxError);
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
