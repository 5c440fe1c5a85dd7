package io.flinkdevices.benchmarks;

import io.flinkdevices.testkit.fake.FakeAmdHost;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;
import io.flinkdevices.testkit.fake.InstalledNvidiaHost;
import io.flinkdevices.testkit.fake.NvmlStandIn;
import io.flinkdevices.testkit.host.HostLibraries;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.core.plugin.DefaultPluginManager;
import org.apache.flink.core.plugin.DirectoryBasedPluginFinder;
import org.apache.flink.core.plugin.PluginManager;
import org.apache.flink.runtime.externalresource.ExternalResourceInfoProvider;
import org.apache.flink.runtime.externalresource.ExternalResourceUtils;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What a driver plugin costs a TaskManager at start: the time from creating the plugin manager over
 * {@code plugins/} to the resource infos being ready, the path {@code TaskManagerRunner} takes
 * ({@code DefaultPluginManager} over {@code DirectoryBasedPluginFinder}, then {@code
 * ExternalResourceUtils.createStaticExternalResourceInfoProviderFromConfig}). Each sample is one
 * fresh JVM holding one plugin folder with one shipped plugin jar, as a TaskManager starts once per
 * process: class loading of the plugin, the driver's discovery on a fake host and its parsing are
 * all in. JVMs of the rows are interleaved, so load from other processes hits every row alike. The
 * window is also split in two: up to the drivers being created (Flink's plugin loading, the
 * factory, the driver's configuration) and the drivers' {@code retrieveResourceInfo} (their
 * discovery), by calling the three steps of that method one by one.
 *
 * <p>Rows: Flink 2.3.0's own GPU plugin (its {@code nvidia-gpu-discovery.sh} on a fake {@code
 * nvidia-smi} with 8 GPUs, amount 2), flink-devices' NVIDIA plugin ({@code nvidia-smi} backend,
 * the same fake; and its {@code nvml} backend on the testkit's stand-in {@code libnvidia-ml.so.1}
 * of 8 GPUs, where a C compiler builds it), AMD ({@code sysfs} backend, 8 MI300X), RDMA (sysfs, 8 InfiniBand ports) and
 * OpenCL (PoCL's CPU device, where PoCL is installed); and, where {@code gcc} can compile {@code
 * benchmarks/opencl-floor.c}, the OpenCL runtime's own share without a JVM ({@link OpenClFloor}),
 * in the same rounds, so that the OpenCL row can be split into the runtime's part and the
 * driver's.
 *
 * <pre>
 * ./mvnw -q -pl benchmarks -am package -DskipTests -Ptaskmanager-start-benchmark [-Dbench.jvms=15] \
 *     [-Dbench.nvidia-before=&lt;another build's driver-nvidia plugin jar&gt;]
 * </pre>
 */
public final class TaskManagerStartBenchmark {

    private TaskManagerStartBenchmark() {}

    /** The measured plugins, in table order. */
    enum Row {
        FLINK_GPU("Flink 2.3.0 GPU plugin (discovery script)", "flink-gpu", "org.apache.flink.externalresource.gpu.GPUDriverFactory", 2),
        NVIDIA("flink-devices NVIDIA (nvidia-smi)", "nvidia", "io.flinkdevices.nvidia.NvidiaGpuDriverFactory", 2),
        /** The same plugin through NVML (JNA), on the testkit's stand-in libnvidia-ml.so.1 of the same 8 GPUs. */
        NVIDIA_NVML("flink-devices NVIDIA (NVML, stand-in library)", "nvidia", "io.flinkdevices.nvidia.NvidiaGpuDriverFactory", 2),
        /**
         * The same through another build's plugin jar ({@code --nvidia-before}, skipped without it), in
         * the same rounds: a change to the NVML path measured beside the build before it.
         */
        NVIDIA_NVML_BEFORE("  the same, plugin jar of --nvidia-before", "nvidia-before", "io.flinkdevices.nvidia.NvidiaGpuDriverFactory", 2),
        AMD("flink-devices AMD (sysfs)", "amd", "io.flinkdevices.amd.AmdGpuDriverFactory", 2),
        RDMA("flink-devices RDMA (sysfs)", "rdma", "io.flinkdevices.rdma.RdmaDriverFactory", 2),
        OPENCL("flink-devices OpenCL (PoCL)", "fpga-opencl", "io.flinkdevices.fpga.OpenClFpgaDriverFactory", 1),
        /** {@link OpenClFloor}: the ICD loader, clGetPlatformIDs and clGetDeviceIDs in C, no JVM. */
        OPENCL_RUNTIME("OpenCL runtime alone (C, no JVM)", "opencl-floor", null, 0),
        /** Of {@link #OPENCL_RUNTIME}, clGetPlatformIDs alone (PoCL's start), from the same process. */
        OPENCL_PLATFORMS("  of it clGetPlatformIDs", "opencl-floor", null, 0);

        final String label;
        final String plugin;
        final String factory;
        final int amount;

        Row(String label, String plugin, String factory, int amount) {
            this.label = label;
            this.plugin = plugin;
            this.factory = factory;
            this.amount = amount;
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --key value pairs, got " + args[i]);
            }
            o.put(args[i].substring(2), args[i + 1]);
        }
        if (o.containsKey("child")) {
            child(Row.valueOf(o.get("child")), Path.of(o.get("work")));
        } else {
            run(o, System.out);
        }
    }

    /**
     * Prepares the hosts and plugin folders, runs {@code jvms} child JVMs per row and prints the
     * table; returns the start times in nanoseconds per row (empty for a row that was skipped).
     *
     * @param o {@code scripts}, {@code flink-jar}, {@code nvidia}, {@code amd}, {@code rdma},
     *     {@code fpga-opencl} (the plugin jars), {@code opencl-floor} (the C source, optional),
     *     {@code jvms}
     */
    static Map<Row, List<Long>> run(Map<String, String> o, PrintStream out) throws Exception {
        int jvms = Integer.parseInt(o.getOrDefault("jvms", "15"));
        Path work = Files.createTempDirectory("flink-devices-tm-start-bench");
        Map<Row, String> skipped = new EnumMap<>(Row.class);
        try {
            Path bin = Files.createDirectories(work.resolve("bin"));
            DiscoveryBenchmark.writeFakeNvidiaSmi(bin.resolve("nvidia-smi"), 8);
            Path scripts = Files.createDirectories(work.resolve("flink-scripts"));
            for (String name : List.of("nvidia-gpu-discovery.sh", "gpu-discovery-common.sh")) {
                Path copy = Files.copy(Path.of(o.get("scripts"), name), scripts.resolve(name));
                Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rwxr-xr-x"));
            }
            Optional<String> noStandIn = NvmlStandIn.unavailable();
            if (noStandIn.isEmpty()) {
                InstalledNvidiaHost nvml = FakeNvidiaHost.builder().gpus(FakeNvidiaHost.Model.H100_SXM_80GB, 8)
                        .install(FakeHost.create(work.resolve("nvml")));
                Files.writeString(work.resolve("nvml.library"), NvmlStandIn.installOn(nvml).toString());
            }
            FakeAmdHost.Installed amd =
                    FakeAmdHost.builder().gpus(FakeAmdHost.Model.MI300X, 8, "SPX", "NPS1").installOn(FakeHost.create(work.resolve("amd")));
            Files.writeString(work.resolve("amd.roots"), amd.sys().root() + "\n" + amd.dev().root() + "\n");
            FakeRdmaHost.Builder rdma = FakeRdmaHost.builder();
            for (int i = 0; i < 4; i++) {
                rdma.infiniband("mlx5_" + i, 200, true, true);
            }
            FakeFileTree rdmaSys = rdma.installOn(FakeHost.create(work.resolve("rdma")));
            Files.writeString(work.resolve("rdma.root"), rdmaSys.root().toString());
            StringBuilder noFloor = new StringBuilder();
            OpenClFloor floor = HostLibraries.present("libOpenCL.so.1")
                    ? OpenClFloor.compile(o.get("opencl-floor"), work, noFloor).orElse(null)
                    : null;
            for (Row row : Row.values()) {
                String jar = o.get(row == Row.FLINK_GPU ? "flink-jar" : row.plugin);
                if (row.factory == null) {
                    if (floor == null) {
                        skipped.put(row, noFloor.length() > 0 ? noFloor.toString() : "no OpenCL loader (libOpenCL.so.1) on this host");
                    }
                } else if ((row == Row.NVIDIA_NVML || row == Row.NVIDIA_NVML_BEFORE) && noStandIn.isPresent()) {
                    skipped.put(row, noStandIn.get());
                } else if (row == Row.NVIDIA_NVML_BEFORE && (jar == null || jar.isBlank())) {
                    skipped.put(row, "no --nvidia-before (-Dbench.nvidia-before): the plugin jar of the build to compare with");
                } else if (row == Row.OPENCL && !HostLibraries.present("libOpenCL.so.1")) {
                    skipped.put(row, "no OpenCL loader (libOpenCL.so.1) on this host");
                } else if (jar == null || !Files.isRegularFile(Path.of(jar))) {
                    skipped.put(row, "no plugin jar at " + jar + " (build the module first)");
                } else {
                    Path folder = Files.createDirectories(work.resolve("plugins-" + row.name()).resolve(row.plugin));
                    Files.copy(Path.of(jar), folder.resolve(Path.of(jar).getFileName()), StandardCopyOption.REPLACE_EXISTING);
                }
            }
            Map<Row, List<Long>> times = new EnumMap<>(Row.class);
            Map<Row, List<Long>> retrievals = new EnumMap<>(Row.class);
            for (int round = 0; round < jvms; round++) {
                for (Row row : Row.values()) {
                    if (skipped.containsKey(row) || row == Row.OPENCL_PLATFORMS) {
                        continue;
                    }
                    if (row == Row.OPENCL_RUNTIME) {
                        OpenClFloor.Sample s = floor.run();
                        times.computeIfAbsent(row, r -> new ArrayList<>()).add(s.totalNanos);
                        times.computeIfAbsent(Row.OPENCL_PLATFORMS, r -> new ArrayList<>()).add(s.platformsNanos);
                    } else {
                        long[] t = startChild(row, work, bin);
                        times.computeIfAbsent(row, r -> new ArrayList<>()).add(t[0]);
                        retrievals.computeIfAbsent(row, r -> new ArrayList<>()).add(t[1]);
                    }
                }
            }
            print(times, retrievals, skipped, jvms, out);
            return times;
        } finally {
            DiscoveryBenchmark.deleteTree(work);
        }
    }

    /**
     * JVM options for every measuring JVM, blank-separated, for profiling: {@code
     * -Dbench.child.jvm-args=-Xlog:class+load:file=/tmp/tm-start-%p.log:uptime} logs the classes each
     * child loads; the child's {@code WINDOW-UPTIME-MS} line says which of them fall in the measured
     * window.
     */
    static final String CHILD_JVM_ARGS = "bench.child.jvm-args";

    /**
     * System properties of a measuring JVM with this prefix become driver params of the
     * flink-devices rows ({@code -Dbench.param.monitor.interval=0} measures them without monitoring).
     */
    static final String PARAM_PREFIX = "bench.param.";

    /** Set in a measuring JVM started with {@link #CHILD_JVM_ARGS}: it prints its window. */
    private static final String PROFILING = "bench.child.profiling";

    /** One measuring JVM: its whole window and, of it, the drivers' {@code retrieveResourceInfo}. */
    private static long[] startChild(Row row, Path work, Path bin) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m"));
        String extra = System.getProperty(CHILD_JVM_ARGS, "").strip();
        if (!extra.isEmpty()) {
            cmd.addAll(List.of(extra.split("\\s+")));
            cmd.add("-D" + PROFILING + "=true");
        }
        cmd.addAll(List.of(
                "-cp",
                System.getProperty("java.class.path"),
                TaskManagerStartBenchmark.class.getName(),
                "--child", row.name(),
                "--work", work.toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("PATH", bin + ":" + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        Path jsig = Path.of(System.getProperty("java.home"), "lib", "libjsig.so");
        if (row == Row.OPENCL && Files.exists(jsig)) {
            pb.environment().put("LD_PRELOAD", jsig.toString());
        }
        String output = ChildProcess.output(pb, row.label + ": the measuring JVM");
        for (String line : output.split("\n")) {
            if (line.startsWith("pid ") && line.contains(" WINDOW-UPTIME-MS ")) {
                System.out.println(row.name() + " " + line);
            }
            if (line.startsWith("START-NANOS ")) {
                String[] f = line.substring("START-NANOS ".length()).strip().split(" ");
                return new long[] {Long.parseLong(f[0]), Long.parseLong(f[1])};
            }
        }
        throw new IllegalStateException(row.label + ": no START-NANOS line in\n" + output);
    }

    /** In the child JVM: one TaskManager start's plugin loading and resource retrieval, timed. */
    private static void child(Row row, Path work) throws Exception {
        Configuration config = new Configuration();
        String name = "dev";
        config.setString("external-resources", name);
        config.setString("external-resource." + name + ".amount", Integer.toString(row.amount));
        config.setString("external-resource." + name + ".driver-factory.class", row.factory);
        String param = "external-resource." + name + ".param.";
        switch (row) {
            case FLINK_GPU:
                config.setString(param + "discovery-script.path", work.resolve("flink-scripts/nvidia-gpu-discovery.sh").toString());
                break;
            case NVIDIA:
                config.setString(param + "backend", "nvidia-smi");
                break;
            case NVIDIA_NVML:
            case NVIDIA_NVML_BEFORE:
                config.setString(param + "backend", "nvml");
                config.setString(param + "nvml.library", Files.readString(work.resolve("nvml.library")).strip());
                break;
            case AMD:
                List<String> roots = Files.readAllLines(work.resolve("amd.roots"));
                config.setString(param + "backend", "sysfs");
                config.setString(param + "sysfs.root", roots.get(0));
                config.setString(param + "dev.root", roots.get(1));
                break;
            case RDMA:
                config.setString(param + "sysfs.root", Files.readString(work.resolve("rdma.root")));
                break;
            case OPENCL:
                config.setString(param + "device.types", "CPU");
                config.setString(param + "platform.pattern", "Portable");
                break;
            default:
                throw new IllegalStateException(row.name());
        }
        if (row != Row.FLINK_GPU) {
            // -Dbench.child.jvm-args=-Dbench.param.monitor.interval=0: a driver param for our rows
            System.getProperties().stringPropertyNames().stream()
                    .filter(k -> k.startsWith(PARAM_PREFIX))
                    .forEach(k -> config.setString(param + k.substring(PARAM_PREFIX.length()), System.getProperty(k)));
        }
        Path plugins = work.resolve("plugins-" + row.name());
        // the three steps of ExternalResourceUtils.createStaticExternalResourceInfoProviderFromConfig,
        // in its order, so that the window splits into Flink's plugin loading with the drivers'
        // creation, and the drivers' retrieveResourceInfo (their discovery)
        Method amounts = flinkStep("getExternalResourceAmountMap", Configuration.class);
        Method drivers = flinkStep("externalResourceDriversFromConfig", Configuration.class, PluginManager.class);
        Method provider = flinkStep("createStaticExternalResourceInfoProvider", Map.class, Map.class);
        boolean profiling = Boolean.getBoolean(PROFILING);
        long startUptime = profiling ? ManagementFactory.getRuntimeMXBean().getUptime() : 0;
        long start = System.nanoTime();
        PluginManager pm =
                new DefaultPluginManager(
                        new DirectoryBasedPluginFinder(plugins).findPlugins(),
                        CoreOptions.getPluginParentFirstLoaderPatterns(config));
        Object amountMap = amounts.invoke(null, config);
        Object driverMap = drivers.invoke(null, config, pm);
        long created = System.nanoTime();
        Set<ExternalResourceInfo> infos =
                ((ExternalResourceInfoProvider) provider.invoke(null, amountMap, driverMap)).getExternalResourceInfos(name);
        long end = System.nanoTime();
        long took = end - start;
        if (profiling) {
            System.out.println("pid " + ProcessHandle.current().pid() + " WINDOW-UPTIME-MS " + startUptime + " " + ManagementFactory.getRuntimeMXBean().getUptime());
        }
        if (infos.size() != row.amount) {
            System.out.println(row.label + " handed out " + infos.size() + " devices, expected " + row.amount);
            System.exit(1);
        }
        System.out.println("START-NANOS " + took + " " + (end - created));
    }

    /** A package-private step of Flink's {@code ExternalResourceUtils}, made callable. */
    private static Method flinkStep(String name, Class<?>... parameters) throws NoSuchMethodException {
        Method m = ExternalResourceUtils.class.getDeclaredMethod(name, parameters);
        m.setAccessible(true);
        return m;
    }

    /**
     * The table: per row the whole window's p50, p90 and max and its ratio to Flink's row, and the
     * p50s of the window's two parts: up to the drivers being created (Flink's plugin loading, the
     * factory, the driver's configuration) and the drivers' {@code retrieveResourceInfo} (their
     * discovery).
     */
    static void print(Map<Row, List<Long>> times, Map<Row, List<Long>> retrievals, Map<Row, String> skipped, int jvms,
            PrintStream out) {
        out.printf(Locale.ROOT, "%nTaskManager start cost of one plugin: plugin manager to resource infos ready, one fresh JVM"
                + " per sample, %d JVMs per row (%d cores, Java %s)%n", jvms, Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"));
        String format = "| %-44s | %9s | %9s | %9s | %14s | %20s | %14s |%n";
        out.printf(Locale.ROOT, format, "plugin", "p50", "p90", "max", "p50 / Flink's", "to drivers created", "retrieval");
        out.printf(Locale.ROOT, format, "---", "---", "---", "---", "---", "---", "---");
        long flinkP50 = p50(times.get(Row.FLINK_GPU));
        for (Row row : Row.values()) {
            if (skipped.containsKey(row)) {
                out.printf(Locale.ROOT, "| %-44s | skipped: %s |%n", row.label, skipped.get(row));
                continue;
            }
            long[] t = sorted(times.get(row));
            String ratio = flinkP50 > 0 ? String.format(Locale.ROOT, "%.2f", pct(t, 0.5) / (double) flinkP50) : "";
            List<Long> retrieval = retrievals.get(row);
            String before = "-";
            String during = "-";
            if (retrieval != null) {
                List<Long> creation = new ArrayList<>();
                for (int i = 0; i < retrieval.size(); i++) {
                    creation.add(times.get(row).get(i) - retrieval.get(i));
                }
                before = DiscoveryBenchmark.ms(p50(creation));
                during = DiscoveryBenchmark.ms(p50(retrieval));
            }
            out.printf(Locale.ROOT, format, row.label, DiscoveryBenchmark.ms(pct(t, 0.5)), DiscoveryBenchmark.ms(pct(t, 0.9)),
                    DiscoveryBenchmark.ms(t[t.length - 1]), ratio, before, during);
        }
        if (times.containsKey(Row.OPENCL) && times.containsKey(Row.OPENCL_RUNTIME)) {
            long runtime = p50(times.get(Row.OPENCL_RUNTIME));
            out.printf(Locale.ROOT, "OpenCL plugin beyond the runtime alone (difference of the p50s): %s%n",
                    DiscoveryBenchmark.ms(p50(times.get(Row.OPENCL)) - runtime));
            if (retrievals.containsKey(Row.FLINK_GPU)) {
                long flinkRetrieval = p50(retrievals.get(Row.FLINK_GPU));
                out.printf(Locale.ROOT, "OpenCL runtime alone against Flink's plugin's whole retrieval (p50s): %s / %s = %.2f%n",
                        DiscoveryBenchmark.ms(runtime), DiscoveryBenchmark.ms(flinkRetrieval), runtime / (double) flinkRetrieval);
            }
        }
    }

    private static long[] sorted(List<Long> nanos) {
        long[] t = new long[nanos.size()];
        for (int i = 0; i < t.length; i++) {
            t[i] = nanos.get(i);
        }
        Arrays.sort(t);
        return t;
    }

    private static long p50(List<Long> nanos) {
        return nanos == null || nanos.isEmpty() ? 0 : pct(sorted(nanos), 0.5);
    }

    private static long pct(long[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }

    /** For tests: the arguments of a run with {@code jvms} JVMs per row. */
    static Map<String, String> options(Path scripts, Path flinkJar, Map<String, Path> plugins, int jvms) {
        Map<String, String> o = new LinkedHashMap<>();
        o.put("scripts", scripts.toString());
        o.put("flink-jar", flinkJar.toString());
        plugins.forEach((k, v) -> o.put(k, v.toString()));
        o.put("jvms", Integer.toString(jvms));
        return o;
    }
}
