package io.flinkdevices.dist;

import io.flinkdevices.dist.StandaloneCluster.FlinkProcess;
import io.flinkdevices.dist.job.DeviceReportingMap;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.fake.FakeAmdHost;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;

import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.Reader;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The distribution in a real Flink 2.3.0 standalone session cluster: a JobManager and two
 * TaskManagers as separate JVM processes on Flink's jars from Maven Central, {@code
 * FLINK_PLUGINS_DIR} naming the unpacked archive's {@code plugins/}, a host with four GPUs (a fake
 * {@code nvidia-smi}) and the NVIDIA driver's coordination on.
 *
 * <p>Each TaskManager receives two GPUs of its own; a job's tasks see exactly their TaskManager's
 * two. One TaskManager is then killed with SIGKILL (its coordination records stay behind) and a
 * new one started: it takes over the dead one's GPUs, the job's failed tasks restart on it and see
 * those GPUs, and at no moment do two TaskManagers hold one GPU, neither in the coordination file
 * (sampled throughout) nor in what the tasks report.
 */
@DisplayName("The distribution in a standalone Flink cluster of separate processes")
class StandaloneClusterEndToEndITCase {

    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
    private static final int GPUS = 4;
    private static final int PER_TASK_MANAGER = 2;

    @TempDir Path temp;

    @Test
    @DisplayName("two TaskManagers share four GPUs; a SIGKILLed one's GPUs go to its replacement and the job recovers")
    void gpusFollowTaskManagersThroughAKill() throws Exception {
        Path plugins = Distribution.unpacked().resolve("plugins");
        FakeHost host = FakeHost.create(temp.resolve("host"));
        Path smi = FakeNvidiaHost.installH100s(host, GPUS);
        Set<String> allGpus =
                IntStream.range(0, GPUS).mapToObj(FakeNvidiaHost::gpuUuid).collect(Collectors.toCollection(TreeSet::new));
        Path coordinationFile = temp.resolve("gpu.coordination");
        Path reports = Files.createDirectories(temp.resolve("reports"));

        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("taskmanager.numberOfTaskSlots", Integer.toString(PER_TASK_MANAGER));
        settings.put("external-resources", "gpu");
        settings.put("external-resource.gpu.amount", Integer.toString(PER_TASK_MANAGER));
        settings.put("external-resource.gpu.driver-factory.class", "io.flinkdevices.nvidia.NvidiaGpuDriverFactory");
        settings.put("external-resource.gpu.param.nvidia-smi.path", smi.toString());
        settings.put("external-resource.gpu.param.coordination.enabled", "true");
        settings.put("external-resource.gpu.param.coordination.file", coordinationFile.toString());
        // a killed TaskManager is noticed within seconds, and its tasks restart
        settings.put("heartbeat.interval", "1000");
        settings.put("heartbeat.timeout", "5000");
        settings.put("restart-strategy.type", "fixed-delay");
        settings.put("restart-strategy.fixed-delay.attempts", "100");
        settings.put("restart-strategy.fixed-delay.delay", "1 s");

        long started = System.nanoTime();
        CoordinationSampler sampler = new CoordinationSampler(coordinationFile);
        try (StandaloneCluster cluster =
                        new StandaloneCluster(temp.resolve("flink"), plugins, Distribution.flinkClassPath(), settings);
                sampler) {
            cluster.startJobManager(START_TIMEOUT);
            FlinkProcess tm1 = cluster.startTaskManager("taskmanager-1");
            FlinkProcess tm2 = cluster.startTaskManager("taskmanager-2");
            cluster.awaitTaskManagers(2, START_TIMEOUT);
            sampler.start();

            Map<String, Long> held = holders(coordinationFile);
            assertThat(held.keySet()).as("GPUs in the coordination file\n%s", cluster.diagnostics()).isEqualTo(allGpus);
            Set<String> tm1Gpus = heldBy(held, tm1.pid());
            Set<String> tm2Gpus = heldBy(held, tm2.pid());
            assertThat(tm1Gpus).as("GPUs of %s", tm1).hasSize(PER_TASK_MANAGER);
            assertThat(tm2Gpus).as("GPUs of %s", tm2).hasSize(PER_TASK_MANAGER);
            // the lines docs/operators.md tells operators to look for in a TaskManager's log
            for (FlinkProcess tm : List.of(tm1, tm2)) {
                String log = Files.readString(tm.log);
                assertThat(log)
                        .as("%s's log", tm)
                        .contains("Enabled external resources: [gpu]")
                        .containsPattern("NVIDIA GPU driver \\(nvidia-smi \\(.*\\), coordinated through .*\\) for"
                                + " external-resource\\.gpu\\.amount: handing out 2 of 4 found: \\[GPU \\d GPU-[0-9a-f-]+, GPU \\d GPU-[0-9a-f-]+\\]");
            }

            JobClient job = submitJob(cluster, reports);
            List<Report> first = awaitReports(cluster, reports, r -> true, 2 * PER_TASK_MANAGER);
            Map<Long, Set<String>> seenByPid = gpusSeenByPid(first);
            assertThat(seenByPid)
                    .as("GPUs the tasks saw, per TaskManager process")
                    .containsOnly(Map.entry(tm1.pid(), tm1Gpus), Map.entry(tm2.pid(), tm2Gpus));
            assertThat(first)
                    .as("every task sees its TaskManager's two GPUs, created by the plugin's class loader")
                    .allSatisfy(r -> {
                        assertThat(r.uuids).hasSize(PER_TASK_MANAGER);
                        assertThat(r.pluginClassLoader).isTrue();
                    });
            assertThat(first.stream().filter(r -> r.pid == tm1.pid())).as("tasks on %s", tm1).hasSize(PER_TASK_MANAGER);

            long beforeKill = System.currentTimeMillis();
            cluster.kill(tm1);
            long killed = System.currentTimeMillis();
            assertThat(heldBy(holders(coordinationFile), tm1.pid()))
                    .as("a SIGKILLed TaskManager cannot release: its records stay until a new one reclaims them")
                    .isEqualTo(tm1Gpus);

            FlinkProcess tm3 = cluster.startTaskManager("taskmanager-3");
            List<Report> recovered = awaitReports(cluster, reports, r -> r.pid == tm3.pid(), PER_TASK_MANAGER);
            cluster.awaitTaskManagers(2, START_TIMEOUT);
            awaitJobRunning(cluster, job);

            Map<String, Long> after = holders(coordinationFile);
            assertThat(heldBy(after, tm3.pid())).as("the new TaskManager took over the dead one's GPUs").isEqualTo(tm1Gpus);
            assertThat(heldBy(after, tm2.pid())).as("the surviving TaskManager kept its GPUs").isEqualTo(tm2Gpus);
            assertThat(after.keySet()).isEqualTo(allGpus);
            assertThat(recovered)
                    .as("the restarted tasks run on the new TaskManager and see the dead one's GPUs")
                    .allSatisfy(r -> {
                        assertThat(r.attempt).isGreaterThan(0);
                        assertThat(r.uuids).isEqualTo(tm1Gpus);
                        assertThat(r.pluginClassLoader).isTrue();
                        assertThat(r.time).as("reported after the kill").isGreaterThanOrEqualTo(beforeKill);
                    });
            assertThat(recovered.stream().map(r -> r.subtask).collect(Collectors.toSet()))
                    .as("the subtasks that ran on the killed TaskManager")
                    .isEqualTo(first.stream().filter(r -> r.pid == tm1.pid()).map(r -> r.subtask).collect(Collectors.toSet()));

            List<Report> all = readReports(reports);
            assertThat(gpusSeenByPid(all).get(tm2.pid())).as("the survivor's tasks never saw another GPU").isEqualTo(tm2Gpus);
            assertThat(all.stream().filter(r -> r.pid == tm1.pid())).allSatisfy(r -> assertThat(r.time).isLessThan(killed));

            sampler.stop();
            assertThat(sampler.samples).as("coordination file samples").isGreaterThan(10);
            assertThat(sampler.violations).as("moments when one GPU had two owners in the coordination file").isEmpty();
            assertThat(sampler.owners)
                    .as("owners each GPU had over the whole run")
                    .isEqualTo(expectedOwners(tm1Gpus, tm2Gpus, tm1.pid(), tm2.pid(), tm3.pid()));

            job.cancel().get(30, TimeUnit.SECONDS);
            System.out.printf(
                    "E2E: standalone cluster run took %.1f s (JobManager + 3 TaskManager processes, one SIGKILL)%n",
                    (System.nanoTime() - started) / 1e9);
        }
    }

    @Test
    @DisplayName("the archive's AMD plugin hands a TaskManager's tasks two MI300X compute partitions, recorded in its coordination file")
    void amdPartitionsReachTheTasks() throws Exception {
        Path plugins = Distribution.unpacked().resolve("plugins");
        FakeHost host = FakeHost.create(temp.resolve("amd-host"));
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(FakeAmdHost.Model.MI300X, 1, "CPX", "NPS4").installOn(host);
        Path coordinationFile = temp.resolve("amd.coordination");
        Path reports = Files.createDirectories(temp.resolve("amd-reports"));

        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("taskmanager.numberOfTaskSlots", Integer.toString(PER_TASK_MANAGER));
        settings.put("external-resources", "gpu");
        settings.put("external-resource.gpu.amount", Integer.toString(PER_TASK_MANAGER));
        settings.put("external-resource.gpu.driver-factory.class", "io.flinkdevices.amd.AmdGpuDriverFactory");
        settings.put("external-resource.gpu.param.unit", "partition");
        settings.put("external-resource.gpu.param.sysfs.root", amd.sys().root().toString());
        settings.put("external-resource.gpu.param.dev.root", amd.dev().root().toString());
        settings.put("external-resource.gpu.param.coordination.enabled", "true");
        settings.put("external-resource.gpu.param.coordination.file", coordinationFile.toString());

        try (StandaloneCluster cluster =
                new StandaloneCluster(temp.resolve("flink-amd"), plugins, Distribution.flinkClassPath(), settings)) {
            cluster.startJobManager(START_TIMEOUT);
            FlinkProcess tm = cluster.startTaskManager("taskmanager-amd");
            cluster.awaitTaskManagers(1, START_TIMEOUT);

            String pci = FakeAmdHost.pciAddress(0);
            assertThat(holders(coordinationFile))
                    .as("partitions in the coordination file\n%s", cluster.diagnostics())
                    .containsOnly(Map.entry(pci + "/0", tm.pid()), Map.entry(pci + "/1", tm.pid()));

            JobClient job = submitJob(cluster, reports, PER_TASK_MANAGER);
            List<Report> seen = awaitReports(cluster, reports, r -> true, PER_TASK_MANAGER);
            Set<String> expected =
                    new TreeSet<>(List.of(
                            "GPU-" + FakeAmdHost.uniqueId(0, 0) + "/0", "GPU-" + FakeAmdHost.uniqueId(0, 1) + "/1"));
            assertThat(seen)
                    .as("every task sees the TaskManager's two partitions, created by the plugin's class loader")
                    .allSatisfy(r -> {
                        assertThat(r.pid).isEqualTo(tm.pid());
                        assertThat(r.uuids).isEqualTo(expected);
                        assertThat(r.pluginClassLoader).isTrue();
                    });
            job.cancel().get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    @DisplayName("flink run submits the samples' job jar to a cluster with the archive's NVIDIA plugin: the report job, the GPU job, --help and a bad option")
    void flinkRunSubmitsTheSampleJobs() throws Exception {
        Path plugins = Distribution.unpacked().resolve("plugins");
        Path jobJar = Path.of(System.getProperty("samples.job.jar"));
        assertThat(jobJar).as("the samples' job jar (built before dist)").isRegularFile();
        FakeHost host = FakeHost.create(temp.resolve("run-host"));
        Path smi = FakeNvidiaHost.installH100s(host, 2);

        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("taskmanager.numberOfTaskSlots", "2");
        settings.put("parallelism.default", "2");
        settings.put("external-resources", "gpu");
        settings.put("external-resource.gpu.amount", "2");
        settings.put("external-resource.gpu.driver-factory.class", "io.flinkdevices.nvidia.NvidiaGpuDriverFactory");
        settings.put("external-resource.gpu.param.backend", "nvidia-smi");
        settings.put("external-resource.gpu.param.nvidia-smi.path", smi.toString());

        try (StandaloneCluster cluster =
                new StandaloneCluster(temp.resolve("flink-run"), plugins, Distribution.flinkClassPath(), settings)) {
            cluster.startJobManager(START_TIMEOUT);
            cluster.startTaskManager("taskmanager-run");
            cluster.awaitTaskManagers(1, START_TIMEOUT);

            StandaloneCluster.ClientRun report = cluster.flink(
                    List.of("run", "-c", "io.flinkdevices.samples.DeviceReportJob", jobJar.toString()), CLIENT_TIMEOUT);
            assertThat(report.exitCode).as("%s", report).isZero();
            assertThat(report.output)
                    .contains("external resource 'gpu', 2 subtask(s):")
                    // each subtask leased a GPU of its own in the TaskManager process, whichever got which
                    .containsPattern("subtask 0 on TaskManager \\S+ pid \\d+, gpu: leased #[01] \\(whole\\)")
                    .containsPattern("subtask 1 on TaskManager \\S+ pid \\d+, gpu: leased #[01] \\(whole\\)")
                    .contains("leased #0 (whole), GPU #0 " + FakeNvidiaHost.gpuUuid(0))
                    .contains("leased #1 (whole), GPU #1 " + FakeNvidiaHost.gpuUuid(1))
                    .contains("Every subtask received a device.");

            // the fake host's GPUs are no CUDA device: the job runs on the CPU path and says so
            StandaloneCluster.ClientRun matvec = cluster.flink(
                    List.of("run", "-c", "io.flinkdevices.samples.gpu.MatrixVectorJob", jobJar.toString(),
                            "--records", "2000", "--batch", "64", "--dims", "32"),
                    CLIENT_TIMEOUT);
            assertThat(matvec.exitCode).as("%s", matvec).isZero();
            assertThat(matvec.output)
                    .contains("MatrixVectorJob: 2000 records of 32 floats x 32x32 matrix, batch 64")
                    .contains("CPU path: 2 subtask(s), 2000 records")
                    .containsPattern("checked \\d+ products against the double-precision reference: 0 wrong")
                    .contains("Every subtask ran on the CPU path");

            StandaloneCluster.ClientRun help = cluster.flink(
                    List.of("run", "-c", "io.flinkdevices.samples.gpu.MatrixVectorJob", jobJar.toString(), "--help"),
                    CLIENT_TIMEOUT);
            assertThat(help.exitCode).as("%s", help).isZero();
            assertThat(help.output).contains("Usage: flink run -c io.flinkdevices.samples.gpu.MatrixVectorJob");

            StandaloneCluster.ClientRun bad = cluster.flink(
                    List.of("run", "-c", "io.flinkdevices.samples.DeviceReportJob", jobJar.toString(), "--resource"),
                    CLIENT_TIMEOUT);
            assertThat(bad.exitCode).as("%s", bad).isNotZero();
            assertThat(bad.output).contains("DeviceReportJob: bad option '--resource' (see --help)");
        }
    }

    private static final Duration CLIENT_TIMEOUT = Duration.ofMinutes(3);

    private static JobClient submitJob(StandaloneCluster cluster, Path reports) throws Exception {
        return submitJob(cluster, reports, 2 * PER_TASK_MANAGER);
    }

    private static JobClient submitJob(StandaloneCluster cluster, Path reports, int parallelism) throws Exception {
        Path jobJar = Distribution.jarOfPackage(DeviceReportingMap.class, Files.createTempFile(reports.getParent(), "job", ".jar"));
        // the job bundles the SDK it reads devices with, as a job author's jar does
        Path sdk = Distribution.codeSourceOf(GpuInfo.class);
        assertThat(sdk).as("sdk-api as a jar").isRegularFile();
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.createRemoteEnvironment(
                        "localhost", cluster.restPort(), jobJar.toString(), sdk.toString());
        env.setParallelism(parallelism);
        env.fromSequence(0, Long.MAX_VALUE)
                .map(new DeviceReportingMap(reports.toString(), 50))
                .sinkTo(new DiscardingSink<>());
        return env.executeAsync("flink-devices end-to-end");
    }

    private static void awaitJobRunning(StandaloneCluster cluster, JobClient job) throws Exception {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        String last = null;
        while (System.nanoTime() < deadline) {
            last = cluster.get("/jobs/" + job.getJobID());
            // every vertex RUNNING with all its subtasks
            if (last != null
                    && last.contains("\"state\":\"RUNNING\"")
                    && !last.matches("(?s).*\"status\":\"(?!RUNNING)[A-Z]+\".*")) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the job did not run again: " + last + "\n" + cluster.diagnostics());
    }

    private static Map<String, List<Long>> expectedOwners(
            Set<String> tm1Gpus, Set<String> tm2Gpus, long tm1, long tm2, long tm3) {
        Map<String, List<Long>> expected = new TreeMap<>();
        tm1Gpus.forEach(g -> expected.put(g, List.of(tm1, tm3)));
        tm2Gpus.forEach(g -> expected.put(g, List.of(tm2)));
        return expected;
    }

    // ---- task reports ----------------------------------------------------------------------

    private static final class Report {
        final int subtask;
        final int attempt;
        final long pid;
        final long time;
        final Set<String> uuids;
        final boolean pluginClassLoader;

        Report(Properties p) {
            subtask = Integer.parseInt(p.getProperty("subtask"));
            attempt = Integer.parseInt(p.getProperty("attempt"));
            pid = Long.parseLong(p.getProperty("pid"));
            time = Long.parseLong(p.getProperty("time"));
            String list = p.getProperty("uuids");
            uuids = list.isEmpty() ? Set.of() : new TreeSet<>(List.of(list.split(",")));
            pluginClassLoader = Boolean.parseBoolean(p.getProperty("plugin-class-loader"));
        }

        @Override
        public String toString() {
            return "subtask " + subtask + " attempt " + attempt + " pid " + pid + " " + uuids;
        }
    }

    private static List<Report> readReports(Path dir) throws IOException {
        List<Report> reports = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(f -> f.toString().endsWith(".properties")).sorted().collect(Collectors.toList())) {
                Properties p = new Properties();
                try (Reader r = Files.newBufferedReader(f, StandardCharsets.UTF_8)) {
                    p.load(r);
                }
                reports.add(new Report(p));
            }
        }
        return reports;
    }

    private static List<Report> awaitReports(
            StandaloneCluster cluster, Path dir, Predicate<Report> filter, int count) throws Exception {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        List<Report> matching = List.of();
        while (System.nanoTime() < deadline) {
            matching = readReports(dir).stream().filter(filter).collect(Collectors.toList());
            if (matching.size() >= count) {
                assertThat(matching).as("task reports").hasSize(count);
                return matching;
            }
            Thread.sleep(200);
        }
        throw new AssertionError(
                "expected " + count + " task reports, got " + matching + "; all: " + readReports(dir) + "\n" + cluster.diagnostics());
    }

    private static Map<Long, Set<String>> gpusSeenByPid(List<Report> reports) {
        Map<Long, Set<String>> byPid = new HashMap<>();
        for (Report r : reports) {
            byPid.computeIfAbsent(r.pid, k -> new TreeSet<>()).addAll(r.uuids);
        }
        return byPid;
    }

    // ---- coordination file -----------------------------------------------------------------

    /** Device id -> owner pid, from the records ({@code <device> <pid> ...}); comments skipped. */
    static Map<String, Long> holders(Path file) throws IOException {
        return parseHolders(readLines(file), new ArrayList<>());
    }

    /**
     * The records as the drivers see them: read under a shared lock on {@code <file>.lock}, the
     * lock every driver takes before it rewrites the file in place, so no read sees half a write.
     * Synchronized: the sampler and the test thread must not hold overlapping locks in one JVM.
     */
    private static synchronized List<String> readLines(Path file) throws IOException {
        Path lockFile = file.resolveSibling(file.getFileName() + ".lock");
        if (!Files.exists(lockFile)) {
            return List.of();
        }
        try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.READ);
                FileLock lock = channel.lock(0, Long.MAX_VALUE, true)) {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return List.of();
        }
    }

    private static Map<String, Long> parseHolders(List<String> lines, List<String> duplicates) {
        Map<String, Long> holders = new TreeMap<>();
        for (String line : lines) {
            String t = line.trim();
            if (t.isEmpty() || t.startsWith("#")) {
                continue;
            }
            String[] fields = t.split("\\s+");
            Long previous = holders.put(fields[0], Long.parseLong(fields[1]));
            if (previous != null) {
                duplicates.add(fields[0] + " held by pid " + previous + " and pid " + fields[1]);
            }
        }
        return holders;
    }

    private static Set<String> heldBy(Map<String, Long> holders, long pid) {
        return holders.entrySet().stream()
                .filter(e -> e.getValue() == pid)
                .map(Map.Entry::getKey)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /**
     * Reads the coordination file every 20 ms on its own thread: records every owner each device
     * has had, in order, and every moment at which one device had two records.
     */
    private static final class CoordinationSampler implements AutoCloseable {
        private final Path file;
        private final Thread thread;
        private volatile boolean running = true;
        final List<String> violations = new CopyOnWriteArrayList<>();
        final Map<String, List<Long>> owners = Collections.synchronizedMap(new TreeMap<>());
        volatile int samples;

        CoordinationSampler(Path file) {
            this.file = file;
            this.thread = new Thread(this::run, "coordination-sampler");
            thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        private void run() {
            while (running) {
                try {
                    List<String> duplicates = new ArrayList<>();
                    Map<String, Long> now = parseHolders(readLines(file), duplicates);
                    duplicates.forEach(d -> violations.add(System.currentTimeMillis() + ": " + d));
                    now.forEach((device, pid) -> {
                        List<Long> seen = owners.computeIfAbsent(device, k -> new ArrayList<>());
                        if (seen.isEmpty() || seen.get(seen.size() - 1) != pid.longValue()) {
                            seen.add(pid);
                        }
                    });
                    samples++;
                    Thread.sleep(20);
                } catch (InterruptedException | ClosedByInterruptException e) {
                    return;
                } catch (IOException | RuntimeException e) {
                    if (running) {
                        violations.add("unreadable coordination file: " + e);
                    }
                }
            }
        }

        void stop() throws InterruptedException {
            running = false;
            thread.interrupt();
            thread.join(5_000);
        }

        @Override
        public void close() throws InterruptedException {
            stop();
        }
    }
}
