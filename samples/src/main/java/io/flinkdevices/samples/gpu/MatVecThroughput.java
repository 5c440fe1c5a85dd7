package io.flinkdevices.samples.gpu;

import io.flinkdevices.sdk.info.GpuInfo;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * CPU path against GPU paths, without Flink around them: the throughput of one backend filling
 * its off-heap batch, computing it and reading the products back, for several batch sizes. The
 * GPU rows run where CUDA starts on GPU {@code --gpu} (default 0) and say why they were skipped
 * elsewhere: the synchronous path ({@code GPU}: copy in, kernel, copy out, wait) and the
 * asynchronous one ({@code GPU async xN}: {@link CudaBatchBackend} with N batches in flight, the
 * next batch filled while the GPU works on the others; {@code --threads 4}: four host threads,
 * each with a backend of its own, on the one GPU, as four subtasks sharing it). "GB/s moved"
 * counts the vectors in and the products out.
 *
 * <pre>
 * MatVecThroughput [--dims 256] [--batches 1,16,256,4096] [--slots 1,2,3] [--threads 1] [--seconds 2] [--gpu 0]
 * </pre>
 */
public final class MatVecThroughput {

    private MatVecThroughput() {}

    /** One measured configuration. */
    static final class Row {
        final MatVecBackend.Path path;
        /** Batches in flight on the asynchronous path; 0 for the synchronous backends. */
        final int slots;
        /** Host threads, each with a backend of its own, all on one GPU (1 for the synchronous rows). */
        final int threads;
        final int batch;
        final long records;
        final long nanos;
        final double maxError;

        Row(MatVecBackend.Path path, int slots, int threads, int batch, long records, long nanos, double maxError) {
            this.path = path;
            this.slots = slots;
            this.threads = threads;
            this.batch = batch;
            this.records = records;
            this.nanos = nanos;
            this.maxError = maxError;
        }

        double recordsPerSecond() {
            return records / (nanos / 1e9);
        }

        String label() {
            return slots == 0 ? path.name() : "GPU async x" + slots + (threads == 1 ? "" : ", " + threads + " thr");
        }
    }

    public static void main(String[] args) {
        int dims = 256;
        List<Integer> batches = List.of(1, 16, 256, 4096);
        List<Integer> slots = List.of(1, 2, 3);
        List<Integer> threads = List.of(1);
        double seconds = 2;
        int gpu = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--dims":
                    dims = Integer.parseInt(args[++i]);
                    break;
                case "--batches":
                    batches = Arrays.stream(args[++i].split(",")).map(Integer::valueOf).toList();
                    break;
                case "--slots":
                    slots = Arrays.stream(args[++i].split(",")).map(Integer::valueOf).toList();
                    break;
                case "--threads":
                    threads = Arrays.stream(args[++i].split(",")).map(Integer::valueOf).toList();
                    break;
                case "--seconds":
                    seconds = Double.parseDouble(args[++i]);
                    break;
                case "--gpu":
                    gpu = Integer.parseInt(args[++i]);
                    break;
                default:
                    throw new IllegalArgumentException(
                            "unknown argument " + args[i]
                                    + "; expected --dims N, --batches 1,16,256, --slots 1,2,3, --threads 1,4, --seconds S, --gpu INDEX");
            }
        }
        run(dims, batches, slots, threads, seconds, gpu, System.out);
    }

    /** Measures every batch size on every path and prints the table; returns the rows measured. */
    static List<Row> run(
            int dims,
            List<Integer> batches,
            List<Integer> slotCounts,
            List<Integer> threadCounts,
            double seconds,
            int gpuIndex,
            PrintStream out) {
        Matrix m = Matrix.generate(dims, dims, MatrixVectorJob.MATRIX_SEED);
        int pool = 1024;
        float[][] vectors = new float[pool][];
        for (int i = 0; i < pool; i++) {
            vectors[i] = IdVector.generate(i, dims, MatrixVectorJob.VECTOR_SEED).values;
        }
        List<Row> rows = new ArrayList<>();
        String gpuSkipped = null;
        String asyncSkipped = null;
        for (int batch : batches) {
            try (CpuMatVec cpu = new CpuMatVec(m, batch)) {
                rows.add(measure(cpu, m, vectors, seconds));
            }
            if (gpuSkipped == null) {
                GpuOpened opened = MatVecBackends.openGpu(GpuInfo.builder("nvidia", gpuIndex).build(), m, batch);
                if (opened.backend == null) {
                    gpuSkipped = opened.reason;
                } else {
                    try (MatVecBackend g = opened.backend) {
                        if (rows.stream().noneMatch(r -> r.path == MatVecBackend.Path.GPU)) {
                            out.println(g.describe());
                        }
                        rows.add(measure(g, m, vectors, seconds));
                    }
                }
            }
            for (int threads : threadCounts) {
                for (int slots : slotCounts) {
                    if (asyncSkipped != null) {
                        break;
                    }
                    try {
                        boolean first = rows.stream().noneMatch(r -> r.slots > 0);
                        rows.add(AsyncLoop.measure(gpuIndex, m, batch, slots, threads, vectors, seconds, d -> {
                            if (first) {
                                out.println(d);
                            }
                        }));
                    } catch (RuntimeException e) {
                        asyncSkipped = e.getMessage();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        asyncSkipped = "interrupted";
                    } catch (Exception e) {
                        asyncSkipped = e.toString();
                    }
                }
            }
        }
        out.printf(
                Locale.ROOT,
                "%nBatched matrix x vector, %dx%d floats, %d CPU cores, Java %s%n",
                dims,
                dims,
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"));
        String format = "| %-19s | %6s | %10s | %14s | %11s | %9s | %11s |%n";
        out.printf(Locale.ROOT, format, "path", "batch", "records", "records/s", "GB/s moved", "GFLOP/s", "max error");
        out.printf(Locale.ROOT, format, "-------------------", "------", "----------", "--------------", "-----------", "---------", "-----------");
        for (Row r : rows) {
            out.printf(
                    Locale.ROOT,
                    format,
                    r.label(),
                    r.batch,
                    r.records,
                    String.format(Locale.ROOT, "%.0f", r.recordsPerSecond()),
                    String.format(Locale.ROOT, "%.2f", r.recordsPerSecond() * 2.0 * dims * Float.BYTES / 1e9),
                    String.format(Locale.ROOT, "%.2f", r.recordsPerSecond() * 2.0 * dims * dims / 1e9),
                    String.format(Locale.ROOT, "%.2e", r.maxError));
        }
        if (gpuSkipped != null) {
            out.println("GPU rows skipped: " + gpuSkipped);
        } else {
            for (int batch : batches) {
                Row cpu = find(rows, MatVecBackend.Path.CPU, batch);
                Row gpu = find(rows, MatVecBackend.Path.GPU, batch);
                StringBuilder line =
                        new StringBuilder(
                                String.format(
                                        Locale.ROOT, "batch %d: GPU / CPU = %.1fx", batch, gpu.recordsPerSecond() / cpu.recordsPerSecond()));
                for (Row a : rows) {
                    if (a.slots > 0 && a.batch == batch) {
                        line.append(
                                String.format(
                                        Locale.ROOT,
                                        ", %s / GPU = %.2fx",
                                        a.label(),
                                        a.recordsPerSecond() / gpu.recordsPerSecond()));
                    }
                }
                out.println(line);
            }
        }
        if (asyncSkipped != null) {
            out.println("GPU async rows skipped: " + asyncSkipped);
        }
        return rows;
    }

    private static Row find(List<Row> rows, MatVecBackend.Path path, int batch) {
        return rows.stream().filter(r -> r.path == path && r.slots == 0 && r.batch == batch).findFirst().orElseThrow();
    }

    /** Fills and computes batches for {@code seconds} (after a warm-up), as the operator does. */
    private static Row measure(MatVecBackend b, Matrix m, float[][] vectors, double seconds) {
        int cols = m.cols();
        int rows = m.rows();
        int batch = b.batchSize();
        float[] product = new float[rows];
        long deadlineWarm = System.nanoTime() + (long) (seconds * 0.25e9);
        long records = 0;
        long start = 0;
        boolean warm = true;
        int next = 0;
        double maxError = 0;
        while (true) {
            long now = System.nanoTime();
            if (warm && now >= deadlineWarm) {
                warm = false;
                records = 0;
                start = now;
            } else if (!warm && now - start >= seconds * 1e9) {
                return new Row(b.path(), 0, 1, batch, records, now - start, maxError);
            }
            int first = next;
            for (int k = 0; k < batch; k++) {
                b.input().put(k * cols, vectors[next], 0, cols);
                next = (next + 1) % vectors.length;
            }
            b.multiply(batch);
            for (int k = 0; k < batch; k++) {
                b.output().get(k * rows, product, 0, rows);
            }
            records += batch;
            if (warm) {
                // Checked during warm-up only: the last product of the batch against double precision.
                double[] exact = m.multiplyExact(vectors[(first + batch - 1) % vectors.length]);
                for (int r = 0; r < rows; r++) {
                    maxError = Math.max(maxError, Math.abs(exact[r] - product[r]));
                }
            }
        }
    }
}
