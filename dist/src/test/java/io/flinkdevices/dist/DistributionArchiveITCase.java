package io.flinkdevices.dist;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.DeviceQuarantine;
import io.flinkdevices.sdk.process.DiscoveryScript;
import io.flinkdevices.sdk.process.ExternalCommand;
import io.flinkdevices.testkit.fake.FakeAmdHost;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;
import io.flinkdevices.testkit.host.HostLibraries;
import io.flinkdevices.testkit.plugin.PluginCheck;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** What an operator finds in the archive, and that each part works as the guide says. */
@DisplayName("The distribution archive")
class DistributionArchiveITCase {

    /** Plugin folder -> the factory class an operator names in config.yaml. */
    static final Map<String, String> DRIVERS =
            Map.of(
                    "nvidia", "io.flinkdevices.nvidia.NvidiaGpuDriverFactory",
                    "amd", "io.flinkdevices.amd.AmdGpuDriverFactory",
                    "rdma", "io.flinkdevices.rdma.RdmaDriverFactory",
                    "fpga-opencl", "io.flinkdevices.fpga.OpenClFpgaDriverFactory");

    @Nested
    @DisplayName("unpacks into one folder")
    class Layout {

        @Test
        @DisplayName("holding the license, the guide, the launcher, the CLI, example snippets, ML_PREDICT's lib/ jar and one folder per driver")
        void topLevel() throws Exception {
            Path root = Distribution.unpacked();
            assertThat(root.getFileName().toString()).isEqualTo("flink-devices-" + Distribution.version());
            assertThat(list(root)).containsExactlyInAnyOrder("LICENSE", "OPERATORS.md", "bin", "cli", "conf", "lib", "plugins", "simulated");
            assertThat(list(root.resolve("plugins"))).containsExactlyInAnyOrderElementsOf(DRIVERS.keySet());
            // the repository's own LICENSE (the failsafe JVM runs in dist/)
            assertThat(root.resolve("LICENSE")).hasSameTextualContentAs(Path.of("..", "LICENSE"));
            assertThat(root.resolve("LICENSE")).content().contains("Apache License", "Version 2.0, January 2004");
            assertThat(root.resolve("bin/flink-devices")).isExecutable();
            assertThat(root.resolve("cli/flink-devices-cli.jar")).isRegularFile();
            assertThat(list(root.resolve("conf/examples"))).allMatch(n -> n.endsWith(".yaml")).isNotEmpty();
        }

        @Test
        @DisplayName("with the NVIDIA folder laid out like Flink's GPU plugin: the jar and an executable discovery script")
        void nvidiaFolder() throws Exception {
            Path nvidia = Distribution.unpacked().resolve("plugins/nvidia");
            assertThat(list(nvidia))
                    .containsExactlyInAnyOrder(
                            "flink-devices-nvidia-" + Distribution.version() + ".jar", "nvidia-gpu-discovery.sh");
            assertThat(nvidia.resolve("nvidia-gpu-discovery.sh")).isExecutable();
        }
    }

    @Nested
    @DisplayName("carries plugin folders that Flink's plugin loader accepts")
    class Plugins {

        @Test
        @DisplayName("one self-contained jar per folder whose factory loads through Flink's PluginLoader")
        void everyFolderPassesThePluginCheck() throws Exception {
            Path plugins = Distribution.unpacked().resolve("plugins");
            Map<String, String> factories = new TreeMap<>();
            for (String folder : list(plugins)) {
                List<String> jars = list(plugins.resolve(folder)).stream().filter(n -> n.endsWith(".jar")).collect(Collectors.toList());
                assertThat(jars).as("jars in plugins/%s", folder).hasSize(1);
                factories.put(folder, PluginCheck.check(plugins.resolve(folder)).factoryClassName());
                try (JarFile jar = new JarFile(plugins.resolve(folder).resolve(jars.get(0)).toFile())) {
                    assertThat(jar.stream().map(e -> e.getName()))
                            .as("plugins/%s bundles the SDK but never Flink or SLF4J", folder)
                            .anyMatch(n -> n.startsWith("io/flinkdevices/sdk/"))
                            .noneMatch(n -> n.startsWith("org/apache/flink/") || n.startsWith("org/slf4j/"));
                }
            }
            assertThat(factories).isEqualTo(new TreeMap<>(DRIVERS));
        }

        @Test
        @DisplayName("every class of every plugin jar, bundled libraries included, is Java 11 bytecode or older (TaskManagers on Java 11 load them)")
        void everyClassRunsOnJava11() throws Exception {
            Path plugins = Distribution.unpacked().resolve("plugins");
            Map<String, Integer> tooNew = new TreeMap<>();
            int classes = 0;
            for (String folder : list(plugins)) {
                for (String name : list(plugins.resolve(folder))) {
                    if (!name.endsWith(".jar")) {
                        continue;
                    }
                    try (JarFile jar = new JarFile(plugins.resolve(folder).resolve(name).toFile())) {
                        for (java.util.jar.JarEntry e : java.util.Collections.list(jar.entries())) {
                            if (!e.getName().endsWith(".class")) {
                                continue;
                            }
                            classes++;
                            int major;
                            try (java.io.DataInputStream in = new java.io.DataInputStream(jar.getInputStream(e))) {
                                assertThat(in.readInt()).as("%s in %s is a class file", e.getName(), name).isEqualTo(0xCAFEBABE);
                                in.readUnsignedShort();
                                major = in.readUnsignedShort();
                            }
                            // a multi-release entry META-INF/versions/N/ is loaded only on Java N and newer
                            java.util.regex.Matcher mr = java.util.regex.Pattern.compile("META-INF/versions/(\\d+)/.*").matcher(e.getName());
                            int allowed = mr.matches() ? 44 + Integer.parseInt(mr.group(1)) : 55;
                            if (major > allowed) {
                                tooNew.put("plugins/" + folder + "/" + name + "!" + e.getName(), major);
                            }
                        }
                    }
                }
            }
            assertThat(classes).as("classes read").isGreaterThan(1000);
            assertThat(tooNew).as("classes newer than their Java release (major 55 = Java 11)").isEmpty();
        }
    }

    @Nested
    @DisplayName("ships ML_PREDICT's provider for Flink's lib/")
    class ModelProvider {

        @Test
        @DisplayName("lib/ holds the model-onnx flink-lib jar alone, and the operator guides and the job authors' guide name that file and $FLINK_HOME/lib/")
        void libJarWhereTheDocsSay() throws Exception {
            String name = "flink-devices-model-onnx-" + Distribution.version() + ".jar";
            Path lib = Distribution.unpacked().resolve("lib");
            assertThat(list(lib)).containsExactly(name);
            try (JarFile jar = new JarFile(lib.resolve(name).toFile())) {
                assertThat(jar.getEntry("io/flinkdevices/model/onnx/OnnxModelProviderFactory.class")).as("the provider").isNotNull();
                assertThat(jar.getEntry("ai/onnxruntime/native/linux-x64/libonnxruntime.so")).as("ONNX Runtime's natives").isNotNull();
                assertThat(jar.getEntry("META-INF/services/org.apache.flink.table.factories.Factory")).as("the SPI entry").isNotNull();
            }
            // the failsafe JVM runs in dist/
            assertThat(Path.of("..", "docs", "operators.md")).content()
                    .contains("lib/" + name, "$FLINK_HOME/lib/");
            for (String doc : List.of("src/main/dist/OPERATORS.md", "../docs/job-authors.md")) {
                assertThat(Path.of(doc)).as(doc).content()
                        .contains("lib/flink-devices-model-onnx-<version>.jar", "$FLINK_HOME/lib/");
            }
        }
    }

    @Nested
    @DisplayName("ships a CLI that runs from the archive")
    class Cli {

        @Test
        @DisplayName("cli/lib holds exactly the jars the CLI jar's manifest names")
        void manifestClassPathResolves() throws Exception {
            Path cli = Distribution.unpacked().resolve("cli");
            List<String> classPath;
            try (JarFile jar = new JarFile(cli.resolve("flink-devices-cli.jar").toFile())) {
                classPath = Arrays.asList(jar.getManifest().getMainAttributes().getValue("Class-Path").trim().split("\\s+"));
            }
            List<String> lib = list(cli.resolve("lib")).stream().map(n -> "lib/" + n).collect(Collectors.toList());
            assertThat(lib).containsExactlyInAnyOrderElementsOf(classPath);
        }

        @Test
        @DisplayName("bin/flink-devices discover, doctor and render work on each NVIDIA example snippet through the archive's plugins/")
        void toolOnEveryNvidiaExample(@TempDir Path temp) throws Exception {
            Path root = Distribution.unpacked();
            FakeHost host = FakeHost.create(temp.resolve("host"));
            FakeNvidiaHost.installH100s(host, 4);
            List<Path> examples = new ArrayList<>();
            try (Stream<Path> files = Files.list(root.resolve("conf/examples"))) {
                files.filter(f -> f.getFileName().toString().startsWith("nvidia")).sorted().forEach(examples::add);
            }
            assertThat(examples).isNotEmpty();
            for (Path example : examples) {
                Path conf = Files.createDirectories(temp.resolve(example.getFileName() + ".conf"));
                Files.copy(example, conf.resolve("config.yaml"));

                ExternalCommand.Result discover = tool(root, host, temp, "discover", "--conf-dir", conf.toString(), "--json");
                assertThat(discover.exitCode()).as("discover %s: %s %s", example.getFileName(), discover.stdout(), discover.stderrTail()).isZero();
                JsonNode gpu = new ObjectMapper().readTree(discover.stdout()).get("resources").get(0);
                assertThat(gpu.get("name").asText()).isEqualTo("gpu");
                assertThat(gpu.get("status").asText()).as("%s: %s", example.getFileName(), gpu).isEqualTo("ok");
                assertThat(gpu.get("infos")).hasSize(2);
                assertThat(gpu.get("infos").get(0).get("vendor").asText()).isEqualTo("nvidia");

                ExternalCommand.Result doctor = tool(root, host, temp, "doctor", "--conf-dir", conf.toString());
                assertThat(doctor.exitCode()).as("doctor %s: %s %s", example.getFileName(), doctor.stdout(), doctor.stderrTail()).isZero();

                ExternalCommand.Result render = tool(root, host, temp, "render", "kubernetes", "--conf-dir", conf.toString());
                assertThat(render.exitCode()).as("render %s: %s", example.getFileName(), render.stderrTail()).isZero();
                assertThat(render.stdout()).contains("nvidia.com/gpu", "flink-main-container");
            }
        }

        @Test
        @DisplayName("the simulated host shipped for trials: discover and doctor see its two GPUs, marked simulated, from the archive alone")
        void simulatedHostForTrials(@TempDir Path temp) throws Exception {
            Path root = Distribution.unpacked();
            assertThat(root.resolve("simulated/nvidia-smi.sh")).isExecutable();
            String example = Files.readString(root.resolve("conf/examples/simulated-nvidia.yaml"));
            assertThat(example).contains("SIMULATED HOST").contains("sed \"s|FLINK_DEVICES_HOME|$PWD|\"");
            Path conf = Files.createDirectories(temp.resolve("conf"));
            // what the example's own comment tells an operator to run
            Files.writeString(conf.resolve("config.yaml"), example.replace("FLINK_DEVICES_HOME", root.toString()));

            Map<String, String> env = Map.of("PATH", System.getenv("PATH"));
            ExternalCommand.Result discover = tool(root, env, temp, "discover", "--conf-dir", conf.toString(), "--json");
            assertThat(discover.exitCode()).as("%s %s", discover.stdout(), discover.stderrTail()).isZero();
            JsonNode gpu = new ObjectMapper().readTree(discover.stdout()).get("resources").get(0);
            assertThat(gpu.get("status").asText()).as("%s", gpu).isEqualTo("ok");
            assertThat(gpu.get("infos")).hasSize(2);
            assertThat(gpu.get("infos").get(0).get("name").asText()).isEqualTo("NVIDIA H100 80GB HBM3 (simulated)");
            assertThat(gpu.get("infos").get(1).get("uuid").asText()).isEqualTo("GPU-5a1c0000-0000-4000-8000-000000000001");

            ExternalCommand.Result doctor = tool(root, env, temp, "doctor", "--conf-dir", conf.toString());
            assertThat(doctor.exitCode()).as("%s %s", doctor.stdout(), doctor.stderrTail()).isZero();
        }

        @Test
        @DisplayName("bin/flink-devices discover, doctor and render work on the AMD example snippet with a fake MI300X host in CPX mode")
        void toolOnTheAmdExample(@TempDir Path temp) throws Exception {
            Path root = Distribution.unpacked();
            FakeHost host = FakeHost.create(temp.resolve("host"));
            FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(FakeAmdHost.Model.MI300X, 1, "CPX", "NPS4").installOn(host);
            Path conf = Files.createDirectories(temp.resolve("amd.conf"));
            // the example's commented sysfs.root and dev.root, set to the fake host's trees
            Files.writeString(conf.resolve("config.yaml"),
                    Files.readString(root.resolve("conf/examples/amd-gpu.yaml"))
                            + "\nexternal-resource.gpu.param.sysfs.root: " + amd.sys().root()
                            + "\nexternal-resource.gpu.param.dev.root: " + amd.dev().root()
                            + "\nexternal-resource.gpu.param.coordination.file: " + temp.resolve("amd.coordination") + "\n");

            ExternalCommand.Result discover = tool(root, host, temp, "discover", "--conf-dir", conf.toString(), "--json");
            assertThat(discover.exitCode()).as("discover: %s %s", discover.stdout(), discover.stderrTail()).isZero();
            JsonNode gpu = new ObjectMapper().readTree(discover.stdout()).get("resources").get(0);
            assertThat(gpu.get("status").asText()).as("%s", gpu).isEqualTo("ok");
            assertThat(gpu.get("infos")).hasSize(2);
            assertThat(gpu.get("infos").get(0).get("vendor").asText()).isEqualTo("amd");
            assertThat(gpu.get("infos").get(0).get("architecture").asText()).isEqualTo("gfx942");

            ExternalCommand.Result doctor = tool(root, host, temp, "doctor", "--conf-dir", conf.toString());
            assertThat(doctor.exitCode()).as("doctor: %s %s", doctor.stdout(), doctor.stderrTail()).isZero();

            ExternalCommand.Result render = tool(root, host, temp, "render", "kubernetes", "--conf-dir", conf.toString());
            assertThat(render.exitCode()).as("render: %s", render.stderrTail()).isZero();
            assertThat(render.stdout()).contains("amd.com/gpu", "flink-main-container");
        }

        @Test
        @DisplayName("bin/flink-devices discover, doctor and render work on the RDMA example snippet with a fake RoCE host")
        void toolOnTheRdmaExample(@TempDir Path temp) throws Exception {
            Path root = Distribution.unpacked();
            FakeHost host = FakeHost.create(temp.resolve("host"));
            FakeFileTree sys = FakeRdmaHost.builder().roce("mlx5_bond_0", "bond0", "10.1.2.3", 100).installOn(host);
            Path conf = Files.createDirectories(temp.resolve("rdma.conf"));
            // the example's commented sysfs.root and coordination file, set to the fake host's
            Files.writeString(conf.resolve("config.yaml"),
                    Files.readString(root.resolve("conf/examples/rdma.yaml"))
                            + "\nexternal-resource.rdma.param.sysfs.root: " + sys.root()
                            + "\nexternal-resource.rdma.param.coordination.file: " + temp.resolve("rdma.coordination") + "\n");

            ExternalCommand.Result discover = tool(root, host, temp, "discover", "--conf-dir", conf.toString(), "--json");
            assertThat(discover.exitCode()).as("discover: %s %s", discover.stdout(), discover.stderrTail()).isZero();
            JsonNode rdma = new ObjectMapper().readTree(discover.stdout()).get("resources").get(0);
            assertThat(rdma.get("status").asText()).as("%s", rdma).isEqualTo("ok");
            assertThat(rdma.get("infos").get(0).get("gid-type").asText()).isEqualTo("RoCE v2");

            ExternalCommand.Result doctor = tool(root, host, temp, "doctor", "--conf-dir", conf.toString());
            assertThat(doctor.exitCode()).as("doctor: %s %s", doctor.stdout(), doctor.stderrTail()).isZero();

            ExternalCommand.Result render = tool(root, host, temp, "render", "kubernetes", "--conf-dir", conf.toString());
            assertThat(render.exitCode()).as("render: %s", render.stderrTail()).isZero();
            assertThat(render.stdout()).contains("rdma/hca_shared_devices_a", "flink-main-container");
        }

        @Test
        @DisplayName("bin/flink-devices discover and render yarn work on the FPGA example snippet with an OpenCL accelerator")
        void toolOnTheFpgaExample(@TempDir Path temp) throws Exception {
            Path oclgrind = Path.of("/usr/lib/oclgrind/liboclgrind-rt-icd.so");
            Path root = Distribution.unpacked();
            // the ICD loader reads this folder instead of /etc/OpenCL/vendors
            Path vendors = Files.createDirectories(temp.resolve("icd"));
            Files.writeString(vendors.resolve("oclgrind.icd"), oclgrind + "\n");
            Path conf = Files.createDirectories(temp.resolve("conf"));
            Files.copy(root.resolve("conf/examples/fpga-opencl.yaml"), conf.resolve("config.yaml"));
            Map<String, String> env = Map.of("OCL_ICD_VENDORS", vendors.toString());

            if (!HostLibraries.present("libOpenCL.so.1")) {
                // no OpenCL loader on this host: the tool says which library and package
                ExternalCommand.Result discover = tool(root, env, temp, "discover", "--conf-dir", conf.toString(), "--json");
                JsonNode fpga = new ObjectMapper().readTree(discover.stdout()).get("resources").get(0);
                assertThat(fpga.get("status").asText()).as("%s", fpga).isEqualTo("error");
                assertThat(fpga.get("error").asText()).contains("libOpenCL.so.1").contains("ocl-icd-libopencl1");
                return;
            }
            assumeTrue(Files.isRegularFile(oclgrind),
                    "no OpenCL accelerator on this host: oclgrind (installed by .ci/install-deps) is missing");

            ExternalCommand.Result discover = tool(root, env, temp, "discover", "--conf-dir", conf.toString(), "--json");
            assertThat(discover.exitCode()).as("discover: %s %s", discover.stdout(), discover.stderrTail()).isZero();
            JsonNode fpga = new ObjectMapper().readTree(discover.stdout()).get("resources").get(0);
            assertThat(fpga.get("name").asText()).isEqualTo("fpga");
            assertThat(fpga.get("status").asText()).as("%s", fpga).isEqualTo("ok");
            assertThat(fpga.get("infos")).hasSize(1);
            assertThat(fpga.get("infos").get(0).get("kind").asText()).isEqualTo("fpga");
            assertThat(fpga.get("infos").get(0).get("platform").asText()).contains("Oclgrind");

            ExternalCommand.Result render = tool(root, env, temp, "render", "yarn", "--conf-dir", conf.toString());
            assertThat(render.exitCode()).as("render yarn: %s", render.stderrTail()).isZero();
            assertThat(render.stdout()).contains("yarn.io/fpga");
        }

        private ExternalCommand.Result tool(Path root, FakeHost host, Path temp, String... args) throws Exception {
            return tool(root, Map.of("PATH", host.path()), temp, args);
        }

        private ExternalCommand.Result tool(Path root, Map<String, String> env, Path temp, String... args) throws Exception {
            List<String> argv = new ArrayList<>(List.of(args));
            argv.addAll(List.of("--plugins-dir", root.resolve("plugins").toString()));
            Map<String, String> all = new HashMap<>(env);
            // the script example names its script relative to FLINK_HOME
            all.put("FLINK_HOME", root.toString());
            // the default coordination file lands here, not in the shared /tmp
            all.put("FLINK_DEVICES_JAVA_OPTS", "-Djava.io.tmpdir=" + Files.createDirectories(temp.resolve("tmp")));
            return ExternalCommand.of(root.resolve("bin/flink-devices"), argv, Duration.ofSeconds(120), "bin/flink-devices")
                    .withEnvironment(all)
                    .run();
        }
    }

    @Nested
    @DisplayName("ships a simulated NVIDIA host whose GPUs a TaskManager monitors, with faults an operator injects")
    class SimulatedTrial {

        private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
        private static final String GPU0 = "GPU-5a1c0000-0000-4000-8000-000000000000";
        private static final String GPU1 = "GPU-5a1c0000-0000-4000-8000-000000000001";

        @Test
        @DisplayName("the guide's trial: discover, doctor and a TaskManager run without a WARN; gpu-lost and ecc fail and quarantine a GPU; clear brings it back to nvidia-smi")
        void trialWithFaults(@TempDir Path temp) throws Exception {
            Path root = Distribution.unpacked();
            // the archive's simulated/ in a folder of its own, so that faults stay in this test
            Path home = Files.createDirectories(temp.resolve("flink-devices"));
            Path simulated = Files.createDirectories(home.resolve("simulated"));
            for (String script : List.of("nvidia-smi.sh", "fault.sh")) {
                Files.copy(root.resolve("simulated").resolve(script), simulated.resolve(script),
                        java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
            }
            // what the example's own comment tells an operator to run, with $PWD = home
            String example = Files.readString(root.resolve("conf/examples/simulated-nvidia.yaml"))
                    .replace("FLINK_DEVICES_HOME", home.toString());
            Map<String, String> settings = new java.util.LinkedHashMap<>();
            settings.put("taskmanager.numberOfTaskSlots", "2");
            example.lines().map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#")).forEach(l -> {
                int colon = l.indexOf(": ");
                settings.put(l.substring(0, colon), l.substring(colon + 2));
            });
            Path coordination = Path.of(settings.get("external-resource.gpu.param.coordination.file"));

            try (StandaloneCluster cluster = new StandaloneCluster(temp.resolve("flink"), root.resolve("plugins"),
                    Distribution.flinkClassPath(), settings)) {
                ExternalCommand.Result discover = tool(root, temp, "discover", "--conf-dir", cluster.confDir().toString());
                assertThat(discover.exitCode()).as("%s%s", discover.stdout(), discover.stderrTail()).isZero();
                assertThat(discover.stdout()).contains("NVIDIA H100 80GB HBM3 (simulated)");
                assertThat(discover.stderrTail()).as("discover's log").doesNotContain("WARN");
                ExternalCommand.Result doctor = tool(root, temp, "doctor", "--conf-dir", cluster.confDir().toString());
                assertThat(doctor.exitCode()).as("%s%s", doctor.stdout(), doctor.stderrTail()).isZero();
                assertThat(doctor.stderrTail()).as("doctor's log").doesNotContain("WARN");

                cluster.startJobManager(START_TIMEOUT);
                StandaloneCluster.FlinkProcess tm = cluster.startTaskManager("taskmanager-1");
                cluster.awaitTaskManagers(1, START_TIMEOUT);
                awaitLog(cluster, tm, "sampled through one nvidia-smi query per interval");
                // two intervals of samples, each answered
                Thread.sleep(2_500);
                assertThat(StandaloneClusterEndToEndITCase.holders(coordination))
                        .as("GPUs the TaskManager holds\n%s", cluster.diagnostics())
                        .isEqualTo(Map.of(GPU0, tm.pid(), GPU1, tm.pid()));
                assertThat(Files.readString(tm.log))
                        .contains("Enabled external resources: [gpu]")
                        .contains("handing out 2 of 2 found");
                assertThat(warnings(tm)).as("WARN lines of the TaskManager's log").isEmpty();

                assertThat(fault(simulated, "ecc", "0", "5").stdout()).contains("volatile uncorrected ECC count 5");
                awaitLog(cluster, tm, "Device " + GPU0 + " is out of service on this host");
                assertThat(fault(simulated, "gpu-lost", "1").stdout()).contains("simulated GPU 1 fell off the bus");
                awaitLog(cluster, tm, "Device " + GPU1 + " is out of service on this host");
                assertThat(DeviceQuarantine.peek(coordination))
                        .extracting(q -> q.deviceId() + ": " + q.reason())
                        .satisfiesExactlyInAnyOrder(
                                q -> assertThat(q).startsWith(GPU0 + ": uncorrected ECC errors: the volatile count rose from 0 to 5"),
                                q -> assertThat(q).startsWith(GPU1 + ": GPU " + GPU1 + " is no longer listed by nvidia-smi"));
                assertThat(warnings(tm))
                        .as("the only WARN lines: each GPU's health change and its quarantine")
                        .allMatch(l -> l.contains("Device monitor of gpu") || l.contains("is out of service on this host"))
                        .anyMatch(l -> l.contains(GPU0) && l.contains("failed"))
                        .anyMatch(l -> l.contains(GPU1) && l.contains("failed"));

                // the GPU comes back to nvidia-smi, but stays out of service until cleared
                assertThat(fault(simulated, "gpu-back", "1").stdout()).contains("simulated GPU 1 is back");
                discover = tool(root, temp, "discover", "--conf-dir", cluster.confDir().toString());
                assertThat(discover.exitCode()).as("%s%s", discover.stdout(), discover.stderrTail()).isEqualTo(4);
                assertThat(discover.stdout())
                        .contains("gpu       unavailable  2")
                        .contains("device " + GPU0 + " is out of service (quarantined): uncorrected ECC errors")
                        .contains("flink-devices quarantine clear --resource gpu --device " + GPU1)
                        .contains("cannot hand out 2 now: 0 of 2 devices free; 2 quarantined: " + GPU0 + " (uncorrected ECC errors");
                assertThat(discover.stderrTail()).as("discover's log").doesNotContain("WARN");

                assertThat(fault(simulated, "clear").stdout()).contains("no fault");
                assertThat(fault(simulated).stdout()).contains("no fault");
                assertThat(tm.process.isAlive()).as("health.action fail-tasks keeps the TaskManager\n%s", cluster.diagnostics()).isTrue();
            }
        }

        @Test
        @DisplayName("fault.sh refuses a GPU index, an ECC count or a command it does not know, with its usage and exit code 2")
        void faultRefusesBadInput(@TempDir Path temp) throws Exception {
            Path simulated = Files.createDirectories(temp.resolve("simulated"));
            Files.copy(Distribution.unpacked().resolve("simulated/fault.sh"), simulated.resolve("fault.sh"),
                    java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
            Map<List<String>, String> bad = Map.of(
                    List.of("gpu-lost", "2"), "expected a simulated GPU index, 0 or 1, but got '2'",
                    List.of("ecc", "0", "-1"), "expected an ECC count, a whole number from 0, but got '-1'",
                    List.of("melt"), "unknown command 'melt'");
            for (Map.Entry<List<String>, String> b : bad.entrySet()) {
                ExternalCommand.Result r = fault(simulated, b.getKey().toArray(String[]::new));
                assertThat(r.exitCode()).as("%s", b.getKey()).isEqualTo(2);
                assertThat(r.stderrTail()).as("%s", b.getKey()).contains(b.getValue()).contains("usage:");
            }
            assertThat(simulated.resolve("faults")).doesNotExist();
        }

        private ExternalCommand.Result fault(Path simulated, String... args) throws Exception {
            return ExternalCommand.of(simulated.resolve("fault.sh"), List.of(args), Duration.ofSeconds(30), "simulated/fault.sh")
                    .withEnvironment(Map.of("PATH", System.getenv("PATH")))
                    .run();
        }

        private List<String> warnings(StandaloneCluster.FlinkProcess tm) throws Exception {
            return Files.readAllLines(tm.log).stream().filter(l -> l.matches("\\S+ WARN .*")).collect(Collectors.toList());
        }

        private void awaitLog(StandaloneCluster cluster, StandaloneCluster.FlinkProcess tm, String text) throws Exception {
            long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
            while (!Files.exists(tm.log) || !Files.readString(tm.log).contains(text)) {
                assertThat(System.nanoTime()).as("'%s' in %s's log\n%s", text, tm, cluster.diagnostics()).isLessThan(deadline);
                assertThat(tm.process.isAlive()).as("%s runs\n%s", tm, cluster.diagnostics()).isTrue();
                Thread.sleep(100);
            }
        }

        private ExternalCommand.Result tool(Path root, Path temp, String... args) throws Exception {
            List<String> argv = new ArrayList<>(List.of(args));
            argv.addAll(List.of("--plugins-dir", root.resolve("plugins").toString()));
            return ExternalCommand.of(root.resolve("bin/flink-devices"), argv, Duration.ofSeconds(120), "bin/flink-devices")
                    .withEnvironment(Map.of("PATH", System.getenv("PATH"),
                            "FLINK_DEVICES_JAVA_OPTS", "-Djava.io.tmpdir=" + Files.createDirectories(temp.resolve("tmp"))))
                    .run();
        }
    }

    @Nested
    @DisplayName("ships nvidia-gpu-discovery.sh, which keeps Flink's discovery-script contract")
    class DiscoveryScriptContract {

        @Test
        @DisplayName("prints the first <amount> indexes nvidia-smi lists, and fails with the reason when there are fewer")
        void amount(@TempDir Path temp) throws Exception {
            FakeHost host = FakeHost.create(temp.resolve("host"));
            FakeNvidiaHost.installH100s(host, 4);

            assertThat(script(host, List.of()).discover(3)).containsExactly("0", "1", "2");
            assertThatThrownBy(() -> script(host, List.of()).discover(5))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("asked for 5 GPUs but nvidia-smi lists 4");
        }

        @Test
        @DisplayName("refuses Flink's coordination arguments and names the driver key that replaces them")
        void refusesScriptCoordination(@TempDir Path temp) throws Exception {
            FakeHost host = FakeHost.create(temp.resolve("host"));
            FakeNvidiaHost.installH100s(host, 4);

            assertThatThrownBy(() -> script(host, List.of("--enable-coordination-mode", "--coordination-file", "/tmp/f")).discover(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("external-resource.<name>.param.coordination.enabled: true");
        }

        @Test
        @DisplayName("says so when nvidia-smi is not on the PATH")
        void noNvidiaSmi(@TempDir Path temp) throws Exception {
            // a PATH with bash only, so that a GPU host's real nvidia-smi stays out of it too
            Path bin = Files.createDirectories(temp.resolve("bin"));
            Path bash = Stream.of("/bin/bash", "/usr/bin/bash").map(Path::of).filter(Files::isExecutable).findFirst().orElseThrow();
            Files.createSymbolicLink(bin.resolve("bash"), bash);

            assertThatThrownBy(() -> script(bin.toString(), List.of()).discover(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("nvidia-smi is not on the PATH");
        }

        private DiscoveryScript script(FakeHost host, List<String> args) {
            return script(host.path(), args);
        }

        private DiscoveryScript script(String path, List<String> args) {
            return DiscoveryScript.of(
                            Distribution.unpacked().resolve("plugins/nvidia/nvidia-gpu-discovery.sh"),
                            args,
                            Duration.ofSeconds(10),
                            "external-resource.gpu.param.discovery-script.path")
                    .withEnvironment(Map.of("PATH", path));
        }
    }

    private static List<String> list(Path dir) throws Exception {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
        }
    }
}
