package io.flinkdevices.samples;

import io.flinkdevices.amd.AmdGpuDriverFactory;
import io.flinkdevices.samples.fpga.FirJob;
import io.flinkdevices.samples.fpga.FirJobOptions;
import io.flinkdevices.samples.fpga.FirJobResult;
import io.flinkdevices.samples.fpga.FirLocal;
import io.flinkdevices.samples.fpga.OpenClDevices;
import io.flinkdevices.samples.gpu.NvidiaPlugin;
import io.flinkdevices.samples.ml.MlPredictLocal;
import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.process.ExternalCommand;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.fake.FakeAmdHost;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.plugin.PluginFolder;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The main job: a local Flink cluster loads the NVIDIA driver plugin from a {@code plugins/}
 * folder, and a job's tasks print the GPUs they were given; the same for the AMD driver plugin
 * (compute partitions of this host's AMD GPUs, or of a fake MI300X host) and the RDMA driver plugin;
 * SQL's {@code ML_PREDICT} over a small ONNX model on two simulated GPUs ({@link MlPredictLocal}).
 * Then, where this process sees an
 * OpenCL platform, the FPGA sample job ({@link FirJob}) runs on a cluster whose TaskManager loads
 * flink-devices' OpenCL driver plugin, on the device that driver hands out; where it sees none (no
 * OpenCL loader, no platform), the job prints why and skips that part.
 *
 * <pre>
 * DevicesJob [FirJob options, e.g. --device-types ACCELERATOR --bitstream /opt/fir.aocx] | --help
 * </pre>
 *
 * <p>Every argument is checked before a cluster starts: {@code --help} prints the usage ({@code
 * run-devices-job-usage.txt} beside this class) and exits 0, a bad argument prints one line on
 * stderr and exits 2. When a driver hands out nothing, the job prints the reason the driver gave
 * (which Flink logs as a WARN and otherwise only keeps in the log).
 *
 * <p>On a host with {@code nvidia-smi} on the {@code PATH} the driver sees the real GPUs. On any
 * other host a fake {@code nvidia-smi} from the testkit lists four H100s; everything else (plugin
 * class loading, Flink's {@code ExternalResourceUtils}, the TaskManager start path, the tasks'
 * runtime context, the driver itself) is the real thing.
 */
public final class DevicesJob {

    /** Resource name as in {@code external-resources: gpu}. */
    static final String RESOURCE = "gpu";

    private DevicesJob() {}

    /** The name the usage text and error lines give the program. */
    static final String PROGRAM = "run-devices-job";

    static final String USAGE_RESOURCE = "run-devices-job-usage.txt";

    /**
     * Runs the job and prints what every subtask saw; {@code args} are {@link FirJob} options.
     * Exits 0 when everything got its device and filtered correctly, 1 when not, 2 on a bad
     * argument (before any cluster starts).
     */
    public static void main(String[] args) throws Exception {
        int status = execute(args, System.out, System.err);
        System.out.flush();
        System.exit(status);
    }

    /**
     * The main job without {@code System.exit}: checks every argument before anything starts,
     * prints the usage for {@code --help} or {@code -h}, and otherwise runs both parts.
     *
     * @return the exit status: 0 success or usage printed, 1 a device or the filter's output was
     *     missing or wrong, 2 a bad argument (one line on {@code err})
     */
    static int execute(String[] args, PrintStream out, PrintStream err) throws Exception {
        if (Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h")) {
            out.print(usage());
            return 0;
        }
        FirJobOptions fpga;
        try {
            fpga = fpgaOptions(args);
        } catch (IllegalArgumentException e) {
            err.println(PROGRAM + ": " + e.getMessage() + " (see --help)");
            return 2;
        }
        boolean gpuOk = runGpu(out);
        boolean amdOk = runAmd(out);
        boolean rdmaOk = runRdma(out);
        boolean mlOk = MlPredictLocal.run(out);
        String fpgaOutcome = fpgaPart(fpga, out);
        boolean ok = gpuOk && amdOk && rdmaOk && mlOk && !FAILED.equals(fpgaOutcome);
        out.println();
        out.println(summary(gpuOk, amdOk, rdmaOk, mlOk, fpgaOutcome));
        return ok ? 0 : 1;
    }

    private static final String FAILED = "FAILED";
    private static final String SKIPPED = "skipped (no OpenCL here)";

    /** The main job's last line: every part's outcome and the exit status. */
    static String summary(boolean gpu, boolean amd, boolean rdma, boolean ml, String fpga) {
        boolean ok = gpu && amd && rdma && ml && !FAILED.equals(fpga);
        return "Summary: NVIDIA " + outcome(gpu) + ", AMD " + outcome(amd) + ", RDMA " + outcome(rdma)
                + ", ML_PREDICT " + outcome(ml) + ", FPGA (OpenCL) " + fpga + "; exit status " + (ok ? 0 : 1);
    }

    private static String outcome(boolean ok) {
        return ok ? "ok" : FAILED;
    }

    /** The text {@code --help} prints, which {@code bin/run-devices-job --help} also prints. */
    static String usage() throws IOException {
        try (InputStream in = DevicesJob.class.getResourceAsStream(USAGE_RESOURCE)) {
            if (in == null) {
                throw new IOException(USAGE_RESOURCE + " is missing from the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** The GPU part: the NVIDIA driver, real or on a fake host; true when every subtask got a GPU. */
    static boolean runGpu(PrintStream out) throws Exception {
        Optional<Path> realSmi = onPath("nvidia-smi");
        // Two GPUs, or every GPU of a real host that has fewer (a one-GPU host hands out its one).
        int amount = realSmi.map(DevicesJob::gpuCount).filter(n -> n >= 1 && n < 2).orElse(2);
        String host =
                realSmi.map(p -> "this host's GPUs (" + p + ")")
                        .orElse("a simulated host: no nvidia-smi on the PATH, so a fake one lists 4 H100 GPUs");
        List<DeviceReport.Line> lines;
        Optional<String> cause;
        try (DriverWarnings warnings = DriverWarnings.capture()) {
            lines = run(realSmi.isEmpty(), 4, amount);
            cause = warnings.causeFor(RESOURCE);
        }
        out.println();
        out.println("flink-devices NVIDIA driver, " + host);
        return report(lines, amount, cause, out);
    }

    /**
     * The AMD part: the AMD driver on this host's KFD topology where it has an AMD GPU agent, else on
     * a fake host of 8 MI300X in CPX/NPS4 mode (64 compute partitions, 2 handed out); true when
     * every subtask got one.
     */
    static boolean runAmd(PrintStream out) throws Exception {
        int amount = 2;
        boolean real = hasAmdGpu(Path.of("/sys"));
        Path work = Files.createTempDirectory("flink-devices-amd");
        List<DeviceReport.Line> lines;
        Optional<String> cause;
        try {
            Map<String, String> params = Map.of("unit", "partition");
            if (!real) {
                FakeAmdHost.Installed amd =
                        FakeAmdHost.builder().gpus(FakeAmdHost.Model.MI300X, 8, "CPX", "NPS4").installOn(FakeHost.create(work.resolve("host")));
                params = Map.of("unit", "partition", "backend", "sysfs",
                        "sysfs.root", amd.sys().root().toString(), "dev.root", amd.dev().root().toString());
            }
            Path plugins = work.resolve("plugins");
            PluginFolder.builder("amd")
                    .includePackageOf(AmdGpuDriverFactory.class)
                    .includeSdk()
                    .factory(AmdGpuDriverFactory.class)
                    .buildInto(plugins);
            try (DriverWarnings warnings = DriverWarnings.capture()) {
                lines = run(plugins, AmdGpuDriverFactory.class.getName(), params, amount);
                cause = warnings.causeFor(RESOURCE);
            }
        } finally {
            LocalFiles.deleteRecursively(work);
        }
        out.println();
        out.println("flink-devices AMD driver, unit partition, "
                + (real ? "this host's AMD GPUs (/sys/class/kfd)" : "a simulated host: no AMD GPU in /sys/class/kfd, so a fake"
                        + " sysfs tree holds 8 MI300X in CPX/NPS4 mode (64 compute partitions)"));
        return report(lines, amount, cause, out);
    }

    /**
     * The RDMA part: the RDMA driver on this host's {@code /sys/class/infiniband} where it has a
     * port, else on a fake host with a ConnectX InfiniBand adapter (port 2 down) and a RoCE
     * adapter on a bond; one port per TaskManager, read by both subtasks. True when every subtask
     * got one.
     */
    static boolean runRdma(PrintStream out) throws Exception {
        Path infiniband = Path.of("/sys/class/infiniband");
        boolean real = Files.isDirectory(infiniband) && !listOrEmpty(infiniband).isEmpty();
        // the header first: the enrichment's subtasks print their transport while the job runs
        out.println();
        out.println("flink-devices RDMA driver, link-layer ethernet (RoCE), "
                + (real ? "this host's RDMA ports (/sys/class/infiniband)"
                        : "a simulated host: no /sys/class/infiniband, so a fake sysfs tree holds a ConnectX InfiniBand"
                                + " adapter (port 2 down) and a RoCE adapter on bond0"));
        out.flush();
        Path work = Files.createTempDirectory("flink-devices-rdma");
        Map<Integer, io.flinkdevices.testkit.cluster.SubtaskResources> bySubtask;
        Optional<String> cause;
        io.flinkdevices.samples.rdma.EnrichmentJob.Result enrichment;
        try {
            Map<String, String> params = Map.of("link-layer", "ethernet");
            if (!real) {
                io.flinkdevices.testkit.fake.FakeFileTree sys =
                        io.flinkdevices.testkit.fake.FakeRdmaHost.builder()
                                .infiniband("mlx5_0", 200, true, false)
                                .roce("mlx5_bond_0", "bond0", "10.1.2.3", 100)
                                .installOn(FakeHost.create(work.resolve("host")));
                params = Map.of("link-layer", "ethernet", "sysfs.root", sys.root().toString());
            }
            Path plugins = work.resolve("plugins");
            io.flinkdevices.samples.rdma.RdmaPlugin.install(plugins);
            try (DriverWarnings warnings = DriverWarnings.capture();
                    LocalDeviceCluster cluster =
                            LocalDeviceCluster.builder()
                                    .pluginsDir(plugins)
                                    .taskManagers(1)
                                    .slotsPerTaskManager(2)
                                    .resource("rdma", io.flinkdevices.samples.rdma.RdmaPlugin.FACTORY, 1, params)
                                    .build()
                                    .start()) {
                bySubtask = io.flinkdevices.testkit.cluster.ResourceProbe.run(cluster.createEnvironment(), "rdma", 2);
                cause = warnings.causeFor("rdma");
                // the RDMA sample on the same TaskManager: enrichment from a table server in this JVM
                try (io.flinkdevices.samples.rdma.TableServer server =
                        io.flinkdevices.samples.rdma.TableServer.start(java.net.InetAddress.getLoopbackAddress(), 0, 100_000, 64)) {
                    enrichment = io.flinkdevices.samples.rdma.EnrichmentJob.execute(
                            cluster.createEnvironment(),
                            io.flinkdevices.samples.rdma.EnrichmentJob.Options.server("127.0.0.1", server.port())
                                    .keys(100_000)
                                    .events(200_000)
                                    .batch(256)
                                    .parallelism(2));
                }
            }
        } finally {
            LocalFiles.deleteRecursively(work);
        }
        out.println("one TaskManager, external-resource.rdma.amount: 1:");
        boolean all = !bySubtask.isEmpty();
        for (io.flinkdevices.testkit.cluster.SubtaskResources seen : bySubtask.values()) {
            if (seen.infos().isEmpty()) {
                all = false;
                out.println("  subtask " + seen.subtaskIndex() + ": no RDMA port");
                continue;
            }
            io.flinkdevices.sdk.info.RdmaInfo p = io.flinkdevices.sdk.info.RdmaInfo.from(seen.infos().iterator().next());
            out.println("  subtask " + seen.subtaskIndex() + ": uses RDMA port " + p.getDevice() + "/" + p.getPort()
                    + " (" + p.getLinkLayer().orElse("?") + ", " + p.getGidType().orElse("?") + " GID #"
                    + (p.getGidIndex().isPresent() ? p.getGidIndex().getAsInt() : -1) + " " + p.getGid().orElse("?") + ", "
                    + p.getNetdev().orElse("?") + ", " + (p.getRateGbps().isPresent() ? p.getRateGbps().getAsLong() : 0) + " Gb/s)");
        }
        out.println(all ? "Every subtask received a device." : "Some subtasks received no device: " + droppedBecause(cause));
        out.println(enrichment.summary());
        return all && enrichment.mismatches == 0 && enrichment.records == 200_000;
    }

    private static List<Path> listOrEmpty(Path dir) {
        try (var s = Files.list(dir)) {
            return s.collect(java.util.stream.Collectors.toList());
        } catch (IOException e) {
            return List.of();
        }
    }

    /** Whether the KFD topology under {@code sys} lists a GPU agent (a node with SIMDs). */
    private static boolean hasAmdGpu(Path sys) {
        Path nodes = sys.resolve("class/kfd/kfd/topology/nodes");
        if (!Files.isDirectory(nodes)) {
            return false;
        }
        try (var all = Files.list(nodes)) {
            return all.anyMatch(n -> {
                try {
                    return Files.readAllLines(n.resolve("properties")).stream()
                            .anyMatch(l -> l.startsWith("simd_count ") && !l.equals("simd_count 0"));
                } catch (IOException | RuntimeException e) {
                    return false;
                }
            });
        } catch (IOException e) {
            return false;
        }
    }


    private static boolean report(List<DeviceReport.Line> lines, int amount, Optional<String> cause, PrintStream out) {
        out.println("one TaskManager, external-resource." + RESOURCE + ".amount: " + amount + ":");
        for (DeviceReport.Line line : lines) {
            out.println("  " + line);
        }
        boolean everySubtaskHasOne = !lines.isEmpty() && lines.stream().allMatch(l -> l.picked != null);
        out.println(
                everySubtaskHasOne
                        ? "Every subtask received a device."
                        : "Some subtasks received no device: " + droppedBecause(cause));
        return everySubtaskHasOne;
    }

    /** What Flink said when it dropped the resource, as one sentence. */
    private static String droppedBecause(Optional<String> cause) {
        return cause.map(c -> "the TaskManager dropped the resource because its driver failed: " + c)
                .orElse("the TaskManager's driver reported no failure (its log at INFO says more)");
    }

    /**
     * The FPGA part's defaults: the OpenCL driver with {@code device.types: ACCELERATOR,CPU} (an
     * FPGA board, an emulator, or PoCL's CPU device), one device, two subtasks, 200 000 samples;
     * {@code args} override them.
     *
     * @throws IllegalArgumentException with a one-line message for a bad argument
     */
    static FirJobOptions fpgaOptions(String... args) {
        FirJobOptions o =
                new FirJobOptions()
                        .devices(FirJobOptions.Devices.DRIVER)
                        .deviceTypes("ACCELERATOR,CPU")
                        .samples(200_000)
                        .batch(4096)
                        .parallelism(2);
        return FirJobOptions.parse(o, args);
    }

    /**
     * Runs the FPGA sample job and prints its report, or prints why there is no OpenCL here. With
     * {@code --devices driver} (the default) it returns false when the host has OpenCL but no
     * subtask received a device from the driver, and says why (the driver's own message); with
     * {@code --devices cpu} no device is expected. False too when the job failed or filtered
     * wrongly.
     */
    static boolean runFpga(FirJobOptions o, PrintStream out) {
        return !FAILED.equals(fpgaPart(o, out));
    }

    /** {@link #runFpga}, saying {@code ok}, {@code skipped} (no OpenCL on this host) or {@code FAILED}. */
    static String fpgaPart(FirJobOptions o, PrintStream out) {
        out.println();
        boolean wantsDevice = o.devices() != FirJobOptions.Devices.CPU;
        if (!wantsDevice) {
            out.println("FPGA sample job with --devices cpu: no OpenCL driver and no device; every subtask filters on the CPU.");
        } else {
            OpenClDevices.Listing listing = OpenClDevices.list();
            if (listing.unavailable != null) {
                out.println("flink-devices OpenCL driver: skipped, because " + listing.unavailable + ".");
                out.println("  (install an OpenCL ICD loader and a platform, e.g. pocl-opencl-icd, to run the FPGA sample job)");
                return SKIPPED;
            }
            List<OpenClDevices.Device> matching = OpenClDevices.matching(listing, o.deviceTypes(), o.platformPattern());
            String wanted =
                    "device.types "
                            + o.deviceTypes()
                            + (".*".equals(o.platformPattern()) ? "" : ", platform.pattern " + o.platformPattern());
            String devices =
                    matching.isEmpty()
                            ? "none of this host's " + listing.devices.size() + " OpenCL device(s)"
                            : matching.toString();
            out.println(
                    o.devices() == FirJobOptions.Devices.DRIVER
                            ? "flink-devices OpenCL driver (" + wanted + "), this host's OpenCL devices of those types: " + devices
                            : "FPGA sample job with --devices local, no driver (" + wanted + "), this host's OpenCL devices of those types: "
                                    + devices);
        }
        try {
            FirJobResult r;
            Optional<String> cause;
            try (DriverWarnings warnings = DriverWarnings.capture()) {
                r = FirLocal.run(o);
                cause = warnings.causeFor(FirJob.RESOURCE);
            }
            out.println(r.summary());
            boolean correct = r.mismatches == 0 && r.records() == o.samples();
            if (!wantsDevice) {
                return outcome(correct);
            }
            if (r.subtasksOpenCl == 0) {
                out.println("  No subtask received an OpenCL device: " + droppedBecause(cause));
            }
            // The host has OpenCL, so every subtask should have run on a device.
            return outcome(r.subtasksOpenCl > 0 && correct);
        } catch (Exception e) {
            out.println("  The FPGA sample job failed: " + rootMessage(e));
            return FAILED;
        }
    }

    private static String rootMessage(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root == t ? String.valueOf(t) : t + "\n  caused by " + root;
    }

    /**
     * Starts the cluster with the NVIDIA driver plugin, runs the job with one subtask per device,
     * and returns what each subtask saw.
     *
     * @param fakeHost use a fake {@code nvidia-smi} listing {@code fakeGpus} H100s
     */
    static List<DeviceReport.Line> run(boolean fakeHost, int fakeGpus, int amount)
            throws Exception {
        Path work = Files.createTempDirectory("flink-devices-job");
        try {
            Path plugins = work.resolve("plugins");
            NvidiaPlugin.install(plugins);
            Map<String, String> params = Map.of();
            if (fakeHost) {
                Path smi = FakeNvidiaHost.installH100s(FakeHost.create(work.resolve("host")), fakeGpus);
                params = Map.of("backend", "nvidia-smi", "nvidia-smi.path", smi.toString());
            }
            return run(plugins, NvidiaPlugin.FACTORY, params, amount);
        } finally {
            LocalFiles.deleteRecursively(work);
        }
    }

    /**
     * Starts a cluster whose TaskManager loads the driver {@code factory} from {@code plugins}, runs
     * the job with one subtask per device, and returns what each subtask saw.
     */
    static List<DeviceReport.Line> run(Path plugins, String factory, Map<String, String> params, int amount)
            throws Exception {
        {
            try (LocalDeviceCluster cluster =
                    LocalDeviceCluster.builder()
                            .pluginsDir(plugins)
                            .taskManagers(1)
                            .slotsPerTaskManager(amount)
                            .resource(RESOURCE, factory, amount, params)
                            .build()
                            .start()) {
                StreamExecutionEnvironment env = cluster.createEnvironment();
                env.setParallelism(amount);
                // One source subtask and a rebalance: round robin reaches every map subtask.
                // Read the bounded job to its end (no limit): the job then finishes by itself
                // before the cluster closes, so the collect client never asks a job that is gone.
                List<DeviceReport.Line> all = new java.util.ArrayList<>();
                try (org.apache.flink.util.CloseableIterator<DeviceReport.Line> it =
                        env.fromSequence(0, 16L * amount - 1)
                                .setParallelism(1)
                                .rebalance()
                                .map(new DeviceReport(RESOURCE))
                                .executeAndCollect()) {
                    it.forEachRemaining(all::add);
                }
                Map<Integer, DeviceReport.Line> bySubtask = new java.util.TreeMap<>();
                for (DeviceReport.Line line : all) {
                    bySubtask.putIfAbsent(line.subtask, line);
                }
                return List.copyOf(bySubtask.values());
            }
        }
    }

    /**
     * How many GPUs {@code nvidia-smi} lists, or -1 when it cannot tell (then the job asks for two
     * and the driver's own error says what is wrong).
     */
    static int gpuCount(Path nvidiaSmi) {
        try {
            ExternalCommand.Result r =
                    ExternalCommand.of(
                                    nvidiaSmi,
                                    List.of("--query-gpu=uuid", "--format=csv,noheader"),
                                    Duration.ofSeconds(10),
                                    nvidiaSmi.toString())
                            .run();
            if (r.exitCode() != 0) {
                return -1;
            }
            return (int) r.stdout().lines().filter(l -> l.trim().startsWith("GPU-")).count();
        } catch (DeviceDriverException e) {
            return -1;
        }
    }

    private static Optional<Path> onPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (!dir.isEmpty()) {
                Path candidate = Path.of(dir, program);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return Optional.of(candidate);
                }
            }
        }
        return Optional.empty();
    }
}
