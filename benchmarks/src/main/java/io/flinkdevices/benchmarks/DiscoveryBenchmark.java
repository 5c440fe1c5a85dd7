package io.flinkdevices.benchmarks;

import io.flinkdevices.sdk.process.ExternalCommand;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Discovery and allocation latency on an 8-GPU host, as a TaskManager pays it at start: {@code
 * retrieveResourceInfo(amount)} of a driver, side by side in one JVM for
 *
 * <ul>
 *   <li>one bare spawn of the fake {@code nvidia-smi} (the floor: what any driver that asks
 *       {@code nvidia-smi} pays at least);
 *   <li>Flink 2.3.0's own {@code GPUDriverFactory}, loaded by class name from the bare {@code
 *       flink-external-resource-gpu} jar, running its {@code nvidia-gpu-discovery.sh} from disk
 *       ({@code discovery-script.path}), without and with {@code --enable-coordination-mode};
 *   <li>flink-devices' {@code io.flinkdevices.nvidia.NvidiaGpuDriverFactory} (nvidia-smi backend),
 *       without and with {@code coordination.enabled}, found by class name on the class path; its
 *       rows say "not built" when the driver is not there;
 *   <li>with {@code --before JARS} (the {@code sdk-api} and {@code driver-nvidia} jars or class
 *       folders of another build, separated by {@code :}), the same coordinated driver from those jars, in a class
 *       loader of its own that loads {@code io.flinkdevices} classes child-first: a change
 *       measured beside the build before it, in the same iterations.
 * </ul>
 *
 * <p>Every driver sees the same fake {@code nvidia-smi} (a POSIX {@code sh} script listing 8 H100
 * GPUs, answering Flink's {@code --query-gpu=index}, our listing with the throttle reasons, and the query
 * without them of builds before they were read in the listing); Flink's script
 * finds it on the {@code PATH}, so the measurement runs in a child JVM whose {@code PATH} starts
 * with the fake's folder. Iterations are interleaved (one of each implementation in turn) so that
 * load from other processes hits every row alike; the coordination file is emptied, untimed,
 * before each call (Flink never releases).
 *
 * <pre>
 * java -cp ... io.flinkdevices.benchmarks.DiscoveryBenchmark --scripts DIR --flink-jar JAR
 *     [--iterations 300] [--warmup 30] [--amount 2] [--gpus 8] [--smi-seconds 0.02] [--before SDK_JAR:NVIDIA_JAR]
 * </pre>
 */
public final class DiscoveryBenchmark {

    /** Our factory, looked up by name: public configuration, never renamed. */
    static final String OUR_FACTORY = "io.flinkdevices.nvidia.NvidiaGpuDriverFactory";

    static final String FLINK_FACTORY = "org.apache.flink.externalresource.gpu.GPUDriverFactory";

    static final String NOT_BUILT = "not built";

    /** The query our driver makes (FakeNvidiaHost.QUERY). */
    static final List<String> QUERY =
            List.of(
                    "--query-gpu=index,uuid,name,memory.total,pci.bus_id,compute_cap,mig.mode.current,"
                            + "clocks_throttle_reasons.active",
                    "--format=csv,noheader,nounits");

    private DiscoveryBenchmark() {}

    /** What is measured, in table order. */
    enum Impl {
        BARE_SPAWN("one bare fake nvidia-smi spawn"),
        EXTERNAL_COMMAND("the same spawn through sdk ExternalCommand"),
        FLINK_PLAIN("Flink 2.3.0 GPUDriver, plain"),
        FLINK_COORDINATION("Flink 2.3.0 GPUDriver, coordination"),
        OURS_PLAIN("flink-devices NvidiaGpuDriver, plain"),
        OURS_COORDINATION("flink-devices NvidiaGpuDriver, coordination"),
        OURS_COORDINATION_BEFORE("  the same, jars of --before");

        final String label;

        Impl(String label) {
            this.label = label;
        }
    }

    /** Parsed command line. */
    static final class Options {
        Path scripts = Path.of(System.getProperty("flink.gpu.scripts", "benchmarks/target/flink-gpu-scripts"));
        Path flinkJar =
                Path.of(System.getProperty("flink.gpu.jar", "benchmarks/target/flink-external-resource-gpu.jar"));
        int iterations = 300;
        int warmup = 30;
        int amount = 2;
        int gpus = 8;
        String before = "";
        /** How long the fake takes before it answers, in seconds (0: builtins only). */
        String smiSeconds = "0";
        Path work;

        List<String> toArgs() {
            return List.of(
                    "--scripts", scripts.toString(),
                    "--flink-jar", flinkJar.toString(),
                    "--iterations", Integer.toString(iterations),
                    "--warmup", Integer.toString(warmup),
                    "--amount", Integer.toString(amount),
                    "--gpus", Integer.toString(gpus),
                    "--smi-seconds", smiSeconds,
                    "--before", before);
        }

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--scripts":
                        o.scripts = Path.of(args[++i]);
                        break;
                    case "--flink-jar":
                        o.flinkJar = Path.of(args[++i]);
                        break;
                    case "--iterations":
                        o.iterations = Integer.parseInt(args[++i]);
                        break;
                    case "--warmup":
                        o.warmup = Integer.parseInt(args[++i]);
                        break;
                    case "--amount":
                        o.amount = Integer.parseInt(args[++i]);
                        break;
                    case "--gpus":
                        o.gpus = Integer.parseInt(args[++i]);
                        break;
                    case "--smi-seconds":
                        o.smiSeconds = args[++i];
                        if (!o.smiSeconds.matches("[0-9]{1,3}(\\.[0-9]{1,6})?")) {
                            throw new IllegalArgumentException("--smi-seconds: expected seconds such as 0.02 but got '"
                                    + o.smiSeconds + "'");
                        }
                        break;
                    case "--before":
                        o.before = i + 1 < args.length ? args[++i] : "";
                        break;
                    case "--work":
                        o.work = Path.of(args[++i]);
                        break;
                    default:
                        throw new IllegalArgumentException(
                                "unknown argument "
                                        + args[i]
                                        + "; expected --scripts DIR, --flink-jar JAR, --iterations N, --warmup N,"
                                        + " --amount N, --gpus N, --smi-seconds S, --before SDK_JAR:NVIDIA_JAR");
                }
            }
            return o;
        }
    }

    public static void main(String[] args) throws Exception {
        Options o = Options.parse(args);
        if (o.work != null) {
            measureAndPrint(o, System.out);
        } else {
            runInChild(o, System.out);
        }
    }

    /**
     * Writes the fake {@code nvidia-smi}, runs the measurement in a child JVM whose {@code PATH}
     * starts with it, copies the child's output to {@code out}, and returns it.
     */
    public static String runInChild(Options o, PrintStream out) throws Exception {
        requireFile(o.scripts.resolve("nvidia-gpu-discovery.sh"));
        requireFile(o.scripts.resolve("gpu-discovery-common.sh"));
        requireFile(o.flinkJar);
        Path work = Files.createTempDirectory("flink-devices-discovery-bench");
        try {
            Path bin = Files.createDirectories(work.resolve("bin"));
            writeFakeNvidiaSmi(bin.resolve("nvidia-smi"), o.gpus, o.smiSeconds);
            // Unpacked from a jar the scripts lose their mode; Flink's driver refuses a script it cannot execute.
            Path scripts = Files.createDirectories(work.resolve("flink-scripts"));
            for (String name : List.of("nvidia-gpu-discovery.sh", "gpu-discovery-common.sh")) {
                Path copy = Files.copy(o.scripts.resolve(name), scripts.resolve(name));
                Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rwxr-xr-x"));
            }
            List<String> cmd = new ArrayList<>();
            cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            cmd.add("-Xmx256m");
            cmd.add("-cp");
            cmd.add(System.getProperty("java.class.path"));
            cmd.add(DiscoveryBenchmark.class.getName());
            cmd.addAll(o.toArgs());
            cmd.set(cmd.indexOf("--scripts") + 1, scripts.toString());
            cmd.add("--work");
            cmd.add(work.toString());
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            pb.environment().put("PATH", bin + ":" + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
            Process p = pb.start();
            StringBuilder all = new StringBuilder();
            try (InputStream in = p.getInputStream()) {
                byte[] buf = new byte[8192];
                int n;
                while ((n = in.read(buf)) > 0) {
                    String s = new String(buf, 0, n, StandardCharsets.UTF_8);
                    all.append(s);
                    out.print(s);
                }
            }
            if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IllegalStateException("the benchmark JVM failed; its output:\n" + all);
            }
            out.flush();
            return all.toString();
        } finally {
            deleteTree(work);
        }
    }

    /** A measured row, or why there is none. */
    static final class Row {
        final Impl impl;
        final long[] sorted;
        final String missing;

        Row(Impl impl, long[] latencies, String missing) {
            this.impl = impl;
            this.sorted = latencies == null ? null : latencies.clone();
            if (sorted != null) {
                Arrays.sort(sorted);
            }
            this.missing = missing;
        }

        long percentile(double p) {
            int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
            return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
        }
    }

    /** One measured operation; {@link #prepare} runs untimed before each call. */
    interface Probe {
        void prepare() throws Exception;

        /** Returns how many devices it got (checked against the amount). */
        int call() throws Exception;
    }

    static Map<Impl, Row> measureAndPrint(Options o, PrintStream out) throws Exception {
        Path work = o.work;
        Path smi = work.resolve("bin").resolve("nvidia-smi");
        Map<Impl, Probe> probes = new LinkedHashMap<>();
        Map<Impl, String> missing = new LinkedHashMap<>();

        probes.put(Impl.BARE_SPAWN, bareSpawn(smi));
        probes.put(Impl.EXTERNAL_COMMAND, externalCommand(smi));

        URLClassLoader flinkLoader =
                new URLClassLoader(new URL[] {o.flinkJar.toUri().toURL()}, DiscoveryBenchmark.class.getClassLoader());
        ExternalResourceDriverFactory flink =
                (ExternalResourceDriverFactory)
                        Class.forName(FLINK_FACTORY, true, flinkLoader).getDeclaredConstructor().newInstance();
        Path flinkFile = work.resolve("flink.coordination");
        Configuration flinkPlain = new Configuration();
        flinkPlain.setString("discovery-script.path", o.scripts.resolve("nvidia-gpu-discovery.sh").toString());
        Configuration flinkCoord = new Configuration(flinkPlain);
        flinkCoord.setString("discovery-script.args", "--enable-coordination-mode --coordination-file " + flinkFile);
        probes.put(Impl.FLINK_PLAIN, driverProbe(flink.createExternalResourceDriver(flinkPlain), o.amount, null));
        probes.put(Impl.FLINK_COORDINATION, driverProbe(flink.createExternalResourceDriver(flinkCoord), o.amount, flinkFile));

        ExternalResourceDriverFactory ours = ourFactory();
        if (ours == null) {
            missing.put(Impl.OURS_PLAIN, NOT_BUILT);
            missing.put(Impl.OURS_COORDINATION, NOT_BUILT);
            missing.put(Impl.OURS_COORDINATION_BEFORE, NOT_BUILT);
        } else {
            Path ourFile = work.resolve("ours.coordination");
            Configuration plain = new Configuration();
            plain.setString("backend", "nvidia-smi");
            plain.setString("nvidia-smi.path", smi.toString());
            Configuration coord = new Configuration(plain);
            coord.setString("coordination.enabled", "true");
            coord.setString("coordination.file", ourFile.toString());
            probes.put(Impl.OURS_PLAIN, driverProbe(ours.createExternalResourceDriver(plain), o.amount, null));
            probes.put(Impl.OURS_COORDINATION, driverProbe(ours.createExternalResourceDriver(coord), o.amount, ourFile));
            if (o.before.isBlank()) {
                missing.put(Impl.OURS_COORDINATION_BEFORE, "no --before");
            } else {
                Path beforeFile = work.resolve("before.coordination");
                Configuration beforeCoord = new Configuration(coord);
                beforeCoord.setString("coordination.file", beforeFile.toString());
                ExternalResourceDriverFactory before = beforeFactory(o.before);
                probes.put(Impl.OURS_COORDINATION_BEFORE,
                        driverProbe(before.createExternalResourceDriver(beforeCoord), o.amount, beforeFile));
            }
        }

        Map<Impl, long[]> latencies = new LinkedHashMap<>();
        probes.keySet().forEach(i -> latencies.put(i, new long[o.iterations]));
        for (int it = -o.warmup; it < o.iterations; it++) {
            for (Map.Entry<Impl, Probe> e : callOrder(probes).entrySet()) {
                Probe probe = e.getValue();
                probe.prepare();
                long start = System.nanoTime();
                int got = probe.call();
                long nanos = System.nanoTime() - start;
                int expected =
                        e.getKey() == Impl.BARE_SPAWN || e.getKey() == Impl.EXTERNAL_COMMAND ? o.gpus : o.amount;
                if (got != expected) {
                    throw new IllegalStateException(
                            e.getKey().label + " returned " + got + " devices, expected " + expected);
                }
                if (it >= 0) {
                    latencies.get(e.getKey())[it] = nanos;
                }
            }
        }
        Map<Impl, Row> rows = new LinkedHashMap<>();
        for (Impl impl : Impl.values()) {
            rows.put(impl, new Row(impl, latencies.get(impl), latencies.containsKey(impl) ? null : missing.get(impl)));
        }
        print(rows, o, out);
        return rows;
    }

    /**
     * The order of calls in one iteration: table order, except that the {@code --before} row runs
     * between Flink's two rows, away from our coordinated row. A coordinated allocation reads
     * {@code /proc/locks}, and one read soon (within an RCU grace period, a few ms) after another
     * finds the kernel's lock-table semaphore warm and costs microseconds instead of milliseconds:
     * side by side, the second of two coordinated rows would measure less than it costs alone.
     */
    static Map<Impl, Probe> callOrder(Map<Impl, Probe> probes) {
        Map<Impl, Probe> order = new LinkedHashMap<>();
        for (Map.Entry<Impl, Probe> e : probes.entrySet()) {
            if (e.getKey() == Impl.OURS_COORDINATION_BEFORE) {
                continue;
            }
            order.put(e.getKey(), e.getValue());
            if (e.getKey() == Impl.FLINK_PLAIN && probes.containsKey(Impl.OURS_COORDINATION_BEFORE)) {
                order.put(Impl.OURS_COORDINATION_BEFORE, probes.get(Impl.OURS_COORDINATION_BEFORE));
            }
        }
        return order;
    }

    /** Our factory from another build's jars, its own classes first (Flink and logging from ours). */
    private static ExternalResourceDriverFactory beforeFactory(String jars) throws Exception {
        List<URL> urls = new ArrayList<>();
        for (String jar : jars.split(":")) {
            Path p = Path.of(jar);
            if (!Files.exists(p)) {
                throw new IllegalArgumentException("--before: " + p + " does not exist; expected the sdk-api and"
                        + " driver-nvidia jars (or class folders) of another build, separated by ':'");
            }
            urls.add(p.toUri().toURL());
        }
        ClassLoader loader = new URLClassLoader(urls.toArray(new URL[0]), DiscoveryBenchmark.class.getClassLoader()) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                if (!name.startsWith("io.flinkdevices.")) {
                    return super.loadClass(name, resolve);
                }
                synchronized (getClassLoadingLock(name)) {
                    Class<?> c = findLoadedClass(name);
                    if (c == null) {
                        try {
                            c = findClass(name);
                        } catch (ClassNotFoundException e) {
                            c = super.loadClass(name, false);
                        }
                    }
                    if (resolve) {
                        resolveClass(c);
                    }
                    return c;
                }
            }
        };
        return (ExternalResourceDriverFactory)
                Class.forName(OUR_FACTORY, true, loader).getDeclaredConstructor().newInstance();
    }

    private static ExternalResourceDriverFactory ourFactory() throws Exception {
        Class<?> c;
        try {
            c = Class.forName(OUR_FACTORY);
        } catch (ClassNotFoundException e) {
            return null;
        }
        return (ExternalResourceDriverFactory) c.getDeclaredConstructor().newInstance();
    }

    private static Probe bareSpawn(Path smi) {
        List<String> cmd = new ArrayList<>();
        cmd.add(smi.toString());
        cmd.addAll(QUERY);
        return new Probe() {
            @Override
            public void prepare() {}

            @Override
            public int call() throws Exception {
                Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
                byte[] out;
                try (InputStream in = p.getInputStream()) {
                    out = in.readAllBytes();
                }
                if (p.waitFor() != 0) {
                    throw new IllegalStateException("fake nvidia-smi failed");
                }
                return (int) new String(out, StandardCharsets.UTF_8).lines().filter(l -> !l.isBlank()).count();
            }
        };
    }

    /**
     * The spawn as drivers of flink-devices make it: {@link ExternalCommand} adds stream drain
     * threads, a timeout, and the hunt for processes the program left behind.
     */
    private static Probe externalCommand(Path smi) {
        ExternalCommand command =
                ExternalCommand.of(smi, QUERY, Duration.ofSeconds(10), "fake nvidia-smi");
        return new Probe() {
            @Override
            public void prepare() {}

            @Override
            public int call() throws Exception {
                ExternalCommand.Result r = command.run();
                if (r.exitCode() != 0) {
                    throw new IllegalStateException("fake nvidia-smi failed: " + r.stderrTail());
                }
                return (int) r.stdout().lines().filter(l -> !l.isBlank()).count();
            }
        };
    }

    private static Probe driverProbe(ExternalResourceDriver driver, int amount, Path coordinationFile) {
        return new Probe() {
            @Override
            public void prepare() throws IOException {
                if (coordinationFile != null) {
                    // Every call starts from a host where no device is taken.
                    Files.write(coordinationFile, new byte[0]);
                }
            }

            @Override
            public int call() throws Exception {
                Set<? extends ExternalResourceInfo> infos = driver.retrieveResourceInfo(amount);
                return infos.size();
            }
        };
    }

    static void print(Map<Impl, Row> rows, Options o, PrintStream out) {
        out.println();
        out.printf(
                Locale.ROOT,
                "Discovery + allocation latency, fake nvidia-smi with %d GPUs, amount %d, %d iterations"
                        + " (%d cores, Java %s, %s %s)%n",
                o.gpus,
                o.amount,
                o.iterations,
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"),
                System.getProperty("os.name"),
                System.getProperty("os.arch"));
        String format = "| %-44s | %10s | %10s | %10s |%n";
        out.printf(Locale.ROOT, format, "implementation", "p50", "p99", "max");
        out.printf(Locale.ROOT, format, "-".repeat(44), "-".repeat(10), "-".repeat(10), "-".repeat(10));
        for (Row r : rows.values()) {
            if (r.sorted == null) {
                out.printf(Locale.ROOT, format, r.impl.label, r.missing, "", "");
            } else {
                out.printf(
                        Locale.ROOT,
                        format,
                        r.impl.label,
                        ms(r.percentile(50)),
                        ms(r.percentile(99)),
                        ms(r.sorted[r.sorted.length - 1]));
            }
        }
        out.println();
        Row bare = rows.get(Impl.BARE_SPAWN);
        Row flinkCoord = rows.get(Impl.FLINK_COORDINATION);
        Row flinkPlain = rows.get(Impl.FLINK_PLAIN);
        Row oursCoord = rows.get(Impl.OURS_COORDINATION);
        Row oursPlain = rows.get(Impl.OURS_PLAIN);
        if (oursCoord.sorted == null) {
            out.println("flink-devices NvidiaGpuDriver: " + NOT_BUILT + " (" + OUR_FACTORY + " is not on the class path)");
            return;
        }
        out.printf(
                Locale.ROOT,
                "coordination: Flink / ours = %.1fx at p50, %.1fx at p99 (goal >= 5x)%n",
                ratio(flinkCoord, oursCoord, 50),
                ratio(flinkCoord, oursCoord, 99));
        out.printf(
                Locale.ROOT,
                "plain: Flink / ours = %.1fx at p50, %.1fx at p99%n",
                ratio(flinkPlain, oursPlain, 50),
                ratio(flinkPlain, oursPlain, 99));
        out.printf(
                Locale.ROOT,
                "ours / one bare nvidia-smi spawn: coordination %.2fx, plain %.2fx at p50 (goal <= 1.5x);"
                        + " ExternalCommand alone %.2fx%n",
                ratio(oursCoord, bare, 50),
                ratio(oursPlain, bare, 50),
                ratio(rows.get(Impl.EXTERNAL_COMMAND), bare, 50));
        Row before = rows.get(Impl.OURS_COORDINATION_BEFORE);
        if (before.sorted != null) {
            out.printf(
                    Locale.ROOT,
                    "jars of --before / one bare nvidia-smi spawn: coordination %.2fx at p50; this build / --before: %.2fx%n",
                    ratio(before, bare, 50),
                    ratio(oursCoord, before, 50));
        }
    }

    static double ratio(Row a, Row b, double p) {
        return (double) a.percentile(p) / Math.max(1, b.percentile(p));
    }

    static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.2f ms", nanos / 1e6);
    }

    /**
     * An 8-GPU (by default) H100 host as {@code nvidia-smi} prints it, in POSIX {@code sh} with
     * builtins only, so the fake costs one process and nothing more: Flink's query ({@code
     * --query-gpu=index}) gets indexes, any other {@code --query-gpu} our full CSV rows, {@code -L}
     * the list.
     */
    static void writeFakeNvidiaSmi(Path target, int gpus) throws IOException {
        writeFakeNvidiaSmi(target, gpus, "0");
    }

    /**
     * The fake, answering after {@code seconds} (one {@code sleep} process more) when that is not
     * 0: a real {@code nvidia-smi} takes about 20 ms (0.02) on an H200 host.
     */
    static void writeFakeNvidiaSmi(Path target, int gpus, String seconds) throws IOException {
        StringBuilder indexes = new StringBuilder();
        StringBuilder full = new StringBuilder();
        StringBuilder list = new StringBuilder();
        for (int i = 0; i < gpus; i++) {
            String uuid = String.format(Locale.ROOT, "GPU-%08x-1111-2222-3333-%012x", 0x5eed0000 + i, i);
            String pci = String.format(Locale.ROOT, "00000000:%02X:00.0", 0x18 + 0x10 * i);
            indexes.append(i).append("\\n");
            full.append(i)
                    .append(", ")
                    .append(uuid)
                    .append(", NVIDIA H100 80GB HBM3, 81559, ")
                    .append(pci)
                    .append(", 9.0, Disabled\\n");
            list.append("GPU ").append(i).append(": NVIDIA H100 80GB HBM3 (UUID: ").append(uuid).append(")\\n");
        }
        String script =
                "#!/bin/sh\n"
                        + "# fake nvidia-smi of the discovery benchmark\n"
                        + (Double.parseDouble(seconds) > 0 ? "sleep " + seconds + "\n" : "")
                        + "case \"$1\" in\n"
                        + "  --query-gpu=index) printf '"
                        + indexes
                        + "' ;;\n"
                        + "  --query-gpu=*clocks_throttle_reasons.active) printf '"
                        + full.toString().replace(", Disabled\\n", ", Disabled, 0x0000000000000001\\n")
                        + "' ;;\n"
                        + "  --query-gpu=*) printf '"
                        + full
                        + "' ;;\n"
                        + "  -L) printf '"
                        + list
                        + "' ;;\n"
                        + "  *) echo \"fake nvidia-smi: unexpected arguments: $*\" >&2; exit 2 ;;\n"
                        + "esac\n";
        Files.writeString(target, script);
        Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private static void requireFile(Path p) {
        if (!Files.isRegularFile(p)) {
            throw new IllegalStateException(
                    p + " does not exist; build the module first (./mvnw -pl benchmarks package -DskipTests)"
                            + " or pass --scripts DIR / --flink-jar JAR");
        }
    }

    static void deleteTree(Path dir) throws IOException {
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).collect(Collectors.toList())) {
                Files.deleteIfExists(p);
            }
        }
    }
}
