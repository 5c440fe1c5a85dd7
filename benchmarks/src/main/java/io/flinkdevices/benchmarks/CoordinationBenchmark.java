package io.flinkdevices.benchmarks;

import io.flinkdevices.benchmarks.BenchmarkWorker.Implementation;
import io.flinkdevices.sdk.coordination.internal.DeviceRecord;
import io.flinkdevices.sdk.coordination.internal.ProcessIdentity;
import io.flinkdevices.sdk.coordination.internal.RecordFormat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Allocation latency of flink-devices' {@code DeviceCoordinator} beside Flink 2.3.0's own GPU
 * coordination ({@code nvidia-gpu-discovery.sh --enable-coordination-mode}), in one run, with 1
 * and with 16 contending processes.
 *
 * <p>Every process is a separate JVM ({@link BenchmarkWorker}) that allocates one of 16 devices,
 * releases it untimed, and repeats; all workers of a scenario start together. A fake {@code
 * nvidia-smi} that lists 16 GPUs stands in for the hardware. Flink's script also discovers (it
 * calls {@code nvidia-smi}), so two reference rows separate the costs: our allocation after one
 * {@code nvidia-smi} run, as a driver does it, and Flink's script without coordination.
 *
 * <pre>
 * java -cp ... io.flinkdevices.benchmarks.CoordinationBenchmark [--scripts DIR] [--processes 1,16] [--scale 1.0]
 *     [--held-by-others 3]
 * </pre>
 *
 * {@code --scripts} names the folder holding Flink's scripts (the build unpacks them into {@code
 * benchmarks/target/flink-gpu-scripts}; default: system property {@code flink.gpu.scripts});
 * {@code --scale} multiplies the iteration counts.
 */
public final class CoordinationBenchmark {

    static final int DEVICES = 16;

    private CoordinationBenchmark() {}

    public static void main(String[] args) throws Exception {
        Path scripts = Path.of(System.getProperty("flink.gpu.scripts", "benchmarks/target/flink-gpu-scripts"));
        List<Integer> processes = List.of(1, 16);
        double scale = 1.0;
        int heldByOthers = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--scripts":
                    scripts = Path.of(args[++i]);
                    break;
                case "--processes":
                    processes =
                            Arrays.stream(args[++i].split(",")).map(Integer::parseInt).collect(Collectors.toList());
                    break;
                case "--scale":
                    scale = Double.parseDouble(args[++i]);
                    break;
                case "--held-by-others":
                    heldByOthers = Integer.parseInt(args[++i]);
                    break;
                default:
                    throw new IllegalArgumentException(
                            "unknown argument " + args[i] + "; expected --scripts DIR, --processes 1,16, --scale 1.0,"
                                    + " --held-by-others 0");
            }
        }
        run(scripts, processes, scale, heldByOthers, System.out);
    }

    /** One measured scenario. */
    static final class Row {
        final Implementation impl;
        final int processes;
        final long[] sorted;
        final int failed;
        final long wallNanos;

        Row(Implementation impl, int processes, long[] latencies, int failed, long wallNanos) {
            this.impl = impl;
            this.processes = processes;
            this.sorted = latencies.clone();
            Arrays.sort(this.sorted);
            this.failed = failed;
            this.wallNanos = wallNanos;
        }

        long percentile(double p) {
            int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
            return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
        }
    }

    /** Runs every scenario and prints the table; returns the rows. */
    public static Map<String, Row> run(Path scripts, List<Integer> processes, double scale, PrintStream out)
            throws Exception {
        return run(scripts, processes, scale, 0, out);
    }

    /**
     * As {@link #run(Path, List, double, PrintStream)}; with {@code heldByOthers > 0}, the file of
     * the one-process {@code DeviceCoordinator.allocate} row starts with 4 devices each held by
     * that many other live processes (a host where other TaskManagers hold devices), so that every
     * transaction also checks that those owners still run.
     */
    public static Map<String, Row> run(
            Path scripts, List<Integer> processes, double scale, int heldByOthers, PrintStream out) throws Exception {
        if (heldByOthers < 0 || heldByOthers * 4 >= DEVICES) {
            throw new IllegalArgumentException("--held-by-others must be 0 to " + (DEVICES / 4 - 1) + " but is " + heldByOthers);
        }
        Path script = scripts.resolve("nvidia-gpu-discovery.sh");
        if (!Files.isRegularFile(script) || !Files.isRegularFile(scripts.resolve("gpu-discovery-common.sh"))) {
            throw new IllegalStateException(
                    "Flink's GPU scripts are not in "
                            + scripts
                            + "; build the module first (./mvnw -pl benchmarks -am package -DskipTests)"
                            + " or pass --scripts DIR");
        }
        Path work = Files.createTempDirectory("flink-devices-bench");
        Path fakeSmi = work.resolve("bin");
        Files.createDirectories(fakeSmi);
        writeFakeNvidiaSmi(fakeSmi.resolve("nvidia-smi"), DEVICES);

        Map<String, Row> rows = new LinkedHashMap<>();
        Map<Implementation, int[]> iterations = new EnumMap<>(Implementation.class);
        // {warm-up with 1 process, measured iterations per process with 1 process, with many
        // processes}. One process warms up with 60,000 allocations: the JIT has compiled the
        // allocation path by then (after 300 the p50 is still 2-3x the steady state), so the
        // figure is the cost of a transaction, not of the interpreter. With many processes each
        // warms up 300 times: contention, not the JIT, dominates there.
        iterations.put(Implementation.OURS, new int[] {60000, 3000, 300});
        iterations.put(Implementation.OURS_WITH_DISCOVERY, new int[] {30, 300, 30});
        iterations.put(Implementation.FLINK_COORDINATION, new int[] {5, 200, 20});
        iterations.put(Implementation.FLINK_PLAIN, new int[] {5, 200, 20});
        for (int p : processes) {
            for (Implementation impl : Implementation.values()) {
                int[] it = iterations.get(impl);
                int n = Math.max(5, (int) Math.round((p == 1 ? it[1] : it[2]) * scale));
                int warm = Math.max(1, (int) Math.round((p == 1 ? it[0] : Math.min(it[0], 300)) * Math.min(1.0, scale)));
                Path file = work.resolve(impl.name().toLowerCase(Locale.ROOT) + "-" + p + ".coordination");
                Files.deleteIfExists(file);
                Files.createFile(file);
                List<Process> owners = new ArrayList<>();
                try {
                    if (impl == Implementation.OURS && p == 1 && heldByOthers > 0) {
                        owners = holdByOthers(file, heldByOthers);
                        out.printf(Locale.ROOT, "  %d of %d devices held by %d other live processes in the next row%n",
                                heldByOthers * 4, DEVICES, heldByOthers);
                    }
                    Row row = measure(impl, p, file, warm, n, fakeSmi, scripts);
                    rows.put(impl + "/" + p, row);
                    out.printf(Locale.ROOT, "  measured %-22s %2d processes: p50 %s%n", impl, p, ms(row.percentile(50)));
                } finally {
                    owners.forEach(Process::destroyForcibly);
                }
            }
        }
        print(rows, processes, out);
        deleteTree(work);
        return rows;
    }

    /** Starts {@code owners} sleeping processes and records 4 devices for each of them in {@code file}. */
    private static List<Process> holdByOthers(Path file, int owners) throws Exception {
        List<Process> started = new ArrayList<>();
        List<DeviceRecord> records = new ArrayList<>();
        for (int o = 0; o < owners; o++) {
            Process sleeper = new ProcessBuilder("sleep", "3600").start();
            started.add(sleeper);
            ProcessIdentity who =
                    ProcessIdentity.of(sleeper.pid())
                            .orElseThrow(() -> new IllegalStateException("sleep " + sleeper.pid() + " is not running"));
            for (int d = 0; d < 4; d++) {
                records.add(DeviceRecord.of(Integer.toString(o * 4 + d), who));
            }
        }
        Files.write(file, RecordFormat.format(records));
        return started;
    }

    private static Row measure(
            Implementation impl, int processes, Path file, int warmup, int iterations, Path fakeSmi, Path scripts)
            throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> workers = new ArrayList<>();
        List<BufferedReader> readers = new ArrayList<>();
        try {
            for (int i = 0; i < processes; i++) {
                Process proc =
                        new ProcessBuilder(
                                        java,
                                        "-Xshare:auto",
                                        "-XX:+UseSerialGC",
                                        "-Xmx64m",
                                        "-XX:-UsePerfData",
                                        "-cp",
                                        System.getProperty("java.class.path"),
                                        BenchmarkWorker.class.getName(),
                                        impl.name(),
                                        file.toString(),
                                        Integer.toString(DEVICES),
                                        Integer.toString(warmup),
                                        Integer.toString(iterations),
                                        fakeSmi.toString(),
                                        scripts.toString())
                                .redirectError(ProcessBuilder.Redirect.INHERIT)
                                .start();
                workers.add(proc);
                readers.add(new BufferedReader(new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8)));
            }
            for (BufferedReader r : readers) {
                expect(r, "READY");
            }
            long start = System.nanoTime();
            for (Process w : workers) {
                OutputStream in = w.getOutputStream();
                in.write("GO\n".getBytes(StandardCharsets.US_ASCII));
                in.flush();
            }
            List<Long> all = new ArrayList<>();
            int failed = 0;
            for (BufferedReader r : readers) {
                String lat = expect(r, "LAT ");
                for (String v : lat.substring(4).split(",")) {
                    all.add(Long.parseLong(v));
                }
                failed += Integer.parseInt(expect(r, "FAILED ").substring(7));
            }
            long wall = System.nanoTime() - start;
            for (Process w : workers) {
                w.waitFor(30, TimeUnit.SECONDS);
            }
            return new Row(impl, processes, all.stream().mapToLong(Long::longValue).toArray(), failed, wall);
        } finally {
            for (Process w : workers) {
                w.destroyForcibly();
            }
        }
    }

    private static String expect(BufferedReader r, String prefix) throws IOException {
        String line;
        while ((line = r.readLine()) != null) {
            if (line.startsWith(prefix)) {
                return line;
            }
        }
        throw new IllegalStateException("a benchmark worker ended without printing " + prefix.trim());
    }

    static void print(Map<String, Row> rows, List<Integer> processes, PrintStream out) {
        out.println();
        out.printf(
                Locale.ROOT,
                "Device allocation latency, %d devices, 1 device per allocation (%d cores, Java %s, %s %s)%n",
                DEVICES,
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"),
                System.getProperty("os.name"),
                System.getProperty("os.arch"));
        String format = "| %-52s | %9s | %7s | %9s | %9s | %9s | %8s | %6s |%n";
        out.printf(Locale.ROOT, format, "implementation", "processes", "samples", "p50", "p99", "max", "alloc/s", "failed");
        out.printf(Locale.ROOT, format, "-".repeat(52), "-".repeat(9), "-".repeat(7), "-".repeat(9), "-".repeat(9), "-".repeat(9), "-".repeat(8), "-".repeat(6));
        for (Implementation impl : Implementation.values()) {
            for (int p : processes) {
                Row row = rows.get(impl + "/" + p);
                out.printf(
                        Locale.ROOT,
                        format,
                        describe(impl),
                        p,
                        row.sorted.length,
                        ms(row.percentile(50)),
                        ms(row.percentile(99)),
                        ms(row.sorted[row.sorted.length - 1]),
                        String.format(Locale.ROOT, "%.0f", row.sorted.length / (row.wallNanos / 1e9)),
                        row.failed);
            }
        }
        out.println();
        for (int p : processes) {
            Row flink = rows.get(Implementation.FLINK_COORDINATION + "/" + p);
            Row ours = rows.get(Implementation.OURS + "/" + p);
            Row oursSmi = rows.get(Implementation.OURS_WITH_DISCOVERY + "/" + p);
            out.printf(
                    Locale.ROOT,
                    "%2d processes: Flink's coordinated script / DeviceCoordinator.allocate at p50: %.1fx (p99 %.1fx);"
                            + " including one nvidia-smi run: %.1fx (p99 %.1fx)%n",
                    p,
                    ratio(flink, ours, 50),
                    ratio(flink, ours, 99),
                    ratio(flink, oursSmi, 50),
                    ratio(flink, oursSmi, 99));
        }
    }

    private static double ratio(Row slow, Row fast, double p) {
        return (double) slow.percentile(p) / Math.max(1, fast.percentile(p));
    }

    static String describe(Implementation impl) {
        switch (impl) {
            case OURS:
                return "flink-devices DeviceCoordinator.allocate";
            case OURS_WITH_DISCOVERY:
                return "flink-devices nvidia-smi run + allocate";
            case FLINK_COORDINATION:
                return "Flink 2.3.0 nvidia-gpu-discovery.sh, coordination";
            case FLINK_PLAIN:
                return "Flink 2.3.0 nvidia-gpu-discovery.sh, no coordination";
            default:
                return impl.name();
        }
    }

    static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.3f ms", nanos / 1e6);
    }

    /** A stand-in for {@code nvidia-smi --query-gpu=index --format=csv,noheader}: one index per line. */
    static void writeFakeNvidiaSmi(Path target, int gpus) throws IOException {
        StringBuilder sb = new StringBuilder("#!/bin/sh\n# fake nvidia-smi: lists GPU indexes\n");
        for (int i = 0; i < gpus; i++) {
            sb.append("echo ").append(i).append('\n');
        }
        Files.writeString(target, sb.toString());
        Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private static void deleteTree(Path dir) throws IOException {
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).collect(Collectors.toList())) {
                Files.deleteIfExists(p);
            }
        }
    }
}
