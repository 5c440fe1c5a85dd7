package io.flinkdevices.samples.gpu;

import io.flinkdevices.job.batch.BatchListener;
import io.flinkdevices.job.batch.BatchSettings;
import io.flinkdevices.job.batch.Batcher;
import io.flinkdevices.job.batch.DeviceBatchOperator;
import io.flinkdevices.job.batch.NoComputeBackend;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * What the pipeline around a device can move, with no device: vectors of {@code dims} floats from
 * a parallel source, chained to a {@link DeviceBatchOperator} over a {@link NoComputeBackend}
 * (fill the batch buffers, read every byte, no kernel) and a sink, on a local Flink cluster in this
 * JVM ({@link PipelineJob}); before it the {@link Batcher} alone on this thread; after it the
 * matrix-vector job on its CPU path ({@link MatrixVectorLocal}, simulated GPUs), whose end-to-end
 * figure sits beside its operator's own throughput inside the batch calls.
 *
 * <p>Each measurement runs {@code --repeat} times in this JVM: the first run of each includes the
 * JIT compiler's warm-up of a fresh JVM, the later ones are what a long-running job sees. Every
 * line gives wall time and CPU time (the task threads', and the whole process's), and the load
 * average before and after, since wall-clock rates on a shared machine say more about the
 * machine than about the code.
 *
 * <p>Run it with {@code -Xms} equal to {@code -Xmx}, as Flink runs a TaskManager ({@link #heap}); the
 * header line says which heap a run had.
 *
 * <pre>
 * ./mvnw -q -pl samples-local -am package -DskipTests -Ppipeline-throughput
 * java -Xms2g -Xmx2g -cp CLASSPATH io.flinkdevices.samples.gpu.PipelineThroughput [--records 20000000] [--dims 256]
 *     [--batch 4096] [--slots 2] [--parallelism 1] [--repeat 3] [--matvec-records 40000]
 *     [--modes checksum,copy] [--variants chained,no-reuse,network] [--alone true]
 * </pre>
 */
public final class PipelineThroughput {

    private PipelineThroughput() {}

    /**
     * The heap this JVM runs with. Flink starts a TaskManager with {@code -Xms} equal to {@code -Xmx}
     * (its {@code ProcessMemoryUtils}); a JVM whose heap the collector may shrink and grow again
     * pays for touching re-committed memory in the thread that allocates, which made the same run of
     * this pipeline vary fourfold in the task thread's CPU time.
     */
    static String heap() {
        MemoryUsage h = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        String max = String.format(Locale.ROOT, "%.1f GiB", h.getMax() / (double) (1L << 30));
        if (h.getInit() == h.getMax()) {
            return "heap fixed at " + max + " (-Xms = -Xmx, as Flink starts a TaskManager)";
        }
        return String.format(Locale.ROOT, "heap from %.1f to %s, resized by the collector: not a TaskManager's"
                + " (Flink starts one with -Xms equal to -Xmx; pass both for the figures a TaskManager sees)",
                h.getInit() / (double) (1L << 30), max);
    }

    public static void main(String[] args) throws Exception {
        long records = 20_000_000L;
        int dims = 256;
        int batch = 4096;
        int slots = 2;
        int parallelism = 1;
        int repeat = 3;
        long matvecRecords = 40_000L;
        String modes = "checksum,copy";
        String variants = "chained";
        boolean alone = true;
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("argument " + args[i] + " has no value");
            }
            String v = args[i + 1];
            switch (args[i]) {
                case "--records": records = Long.parseLong(v); break;
                case "--dims": dims = Integer.parseInt(v); break;
                case "--batch": batch = Integer.parseInt(v); break;
                case "--slots": slots = Integer.parseInt(v); break;
                case "--parallelism": parallelism = Integer.parseInt(v); break;
                case "--repeat": repeat = Integer.parseInt(v); break;
                case "--matvec-records": matvecRecords = Long.parseLong(v); break;
                case "--modes": modes = v; break;
                case "--variants": variants = v; break;
                case "--alone": alone = Boolean.parseBoolean(v); break;
                default:
                    throw new IllegalArgumentException("unknown argument " + args[i] + "; expected --records, --dims,"
                            + " --batch, --slots, --parallelism, --repeat, --matvec-records, --modes, --variants,"
                            + " --alone");
            }
        }
        if (repeat < 1 || parallelism < 1 || records < 1) {
            throw new IllegalArgumentException("--repeat, --parallelism and --records must be at least 1, but are "
                    + repeat + ", " + parallelism + " and " + records);
        }
        BatchSettings settings = BatchSettings.of(batch, slots, Duration.ofMillis(100));
        System.out.printf(Locale.ROOT, "pipeline: %d records of %d floats, %s, parallelism %d, %d cores, Java %s,"
                + " %s, load average %s%n", records, dims, settings, parallelism, Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"), heap(), loadAverage());
        long bestWall = Long.MAX_VALUE;
        long bestCpu = Long.MAX_VALUE;
        for (int r = 1; alone && r <= repeat; r++) {
            String load = loadAverage();
            long[] t = batcherAlone(records, dims, settings);
            System.out.printf(Locale.ROOT, "  run %d, the block alone (no Flink: new vector, Batcher.add, checksum,"
                    + " emit): %.2f s, %.2f M records/s; this thread's CPU %.2f s: %.2f M records per CPU second;"
                    + " load %s -> %s%n", r, t[0] / 1e9, records / (t[0] / 1e9) / 1e6, t[1] / 1e9,
                    records / (t[1] / 1e9) / 1e6, load, loadAverage());
            bestWall = Math.min(bestWall, t[0] / 1_000_000);
            bestCpu = Math.min(bestCpu, t[1]);
        }
        if (alone) {
            best("the block alone", records, bestWall, bestCpu, repeat);
        }
        for (String variantName : variants.split(",")) {
            if (variantName.isBlank()) {
                continue;
            }
            PipelineJob.Variant variant =
                    PipelineJob.Variant.valueOf(variantName.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
            for (String mode : modes.split(",")) {
                if (mode.isBlank()) {
                    continue;
                }
                NoComputeBackend.Mode m = NoComputeBackend.Mode.valueOf(mode.trim().toUpperCase(Locale.ROOT));
                bestWall = Long.MAX_VALUE;
                bestCpu = Long.MAX_VALUE;
                for (int r = 1; r <= repeat; r++) {
                    String load = loadAverage();
                    PipelineJob.Run run = PipelineJob.run(records, dims, settings, parallelism, m, variant);
                    report(r, variant, m, records, dims, run, load);
                    bestWall = Math.min(bestWall, run.netMillis());
                    bestCpu = Math.min(bestCpu, run.taskCpuNanos());
                }
                best(variantName.trim() + " (" + mode.trim() + ")", records, bestWall, bestCpu, repeat);
            }
        }
        for (int r = 1; matvecRecords > 0 && r <= repeat; r++) {
            String load = loadAverage();
            MatrixVectorJob.Result res = MatrixVectorLocal.run(Math.min(batch, 4096), matvecRecords, dims, parallelism);
            System.out.println(res.summary());
            double inside = res.recordsCpu / Math.max(1e-9, res.nanosCpu / 1e9) * Math.max(1, res.subtasksCpu);
            double job = res.recordsCpu / Math.max(1e-3, res.jobMillis / 1e3);
            double stream = res.recordsCpu / Math.max(1e-3, res.streamMillis / 1e3);
            System.out.printf(Locale.ROOT, "  run %d, CPU path: inside the batch calls %.0f records/s (all subtasks);"
                    + " first vector to last product %.0f records/s = %.1f%% of it; whole job (deployment included)"
                    + " %.0f records/s = %.1f%%; load %s -> %s%n", r, inside, stream, 100 * stream / inside, job,
                    100 * job / inside, load, loadAverage());
        }
    }

    private static void report(int run, PipelineJob.Variant variant, NoComputeBackend.Mode mode, long records,
            int dims, PipelineJob.Run r, String loadBefore) {
        double s = r.netMillis() / 1e3;
        System.out.printf(Locale.ROOT, "  run %d, %s: source -> batching -> no-compute (%s) -> sink: %.2f s, %.2f M"
                        + " records/s (%.2f GiB/s of vectors in); task threads' CPU %.2f s: %.2f M records per CPU"
                        + " second; process CPU %.2f s: %.2f M records per CPU second; load %s -> %s%n",
                run, variant.name().toLowerCase(Locale.ROOT).replace('_', '-'), mode.name().toLowerCase(Locale.ROOT),
                s, records / s / 1e6, records * (double) dims * Float.BYTES / s / (1L << 30),
                r.taskCpuNanos() / 1e9, perCpuSecond(records, r.taskCpuNanos()), r.processCpuNanos() / 1e9,
                perCpuSecond(records, r.processCpuNanos()), loadBefore, loadAverage());
    }

    /**
     * The fastest of the runs by wall time and by CPU time: on a shared machine other work only
     * ever adds time, so the fastest run is the closest to what the code costs.
     */
    private static void best(String what, long records, long wallMillis, long cpuNanos, int runs) {
        System.out.printf(Locale.ROOT, "  best of %d, %s: %.2f M records/s wall; %.2f M records per CPU second of the"
                + " task threads%n", runs, what, records / (wallMillis / 1e3) / 1e6, perCpuSecond(records, cpuNanos));
    }

    private static double perCpuSecond(long records, long cpuNanos) {
        return cpuNanos <= 0 ? Double.NaN : records / (cpuNanos / 1e9) / 1e6;
    }

    /** The first three fields of {@code /proc/loadavg}, or "n/a" where there is none. */
    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg"), StandardCharsets.US_ASCII).trim().split("\\s+");
            return f.length >= 3 ? f[0] + " " + f[1] + " " + f[2] : "n/a";
        } catch (IOException | RuntimeException e) {
            return "n/a";
        }
    }

    /** The Batcher without Flink on this thread: returns wall and CPU nanoseconds. */
    static long[] batcherAlone(long records, int dims, BatchSettings settings) throws Exception {
        long[] sum = new long[1];
        PipelineJob.Vectors vectors = new PipelineJob.Vectors(dims, false);
        NoComputeBackend backend = NoComputeBackend.open(NoComputeBackend.Mode.CHECKSUM, settings, dims * Float.BYTES);
        try (Batcher<IdVector, Long> b = new Batcher<>(backend,
                new PipelineJob.ChecksumCodec(dims, NoComputeBackend.Mode.CHECKSUM), (r, ts) -> sum[0] += r,
                BatchListener.NONE)) {
            long cpu0 = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            for (long i = 0; i < records; i++) {
                b.add(vectors.map(i), Batcher.NO_TIMESTAMP);
            }
            b.drain();
            long wall = System.nanoTime() - t0;
            long cpu = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - cpu0;
            if (sum[0] == 42) {
                System.out.println(); // keeps the sums alive
            }
            return new long[] {wall, cpu};
        }
    }
}
