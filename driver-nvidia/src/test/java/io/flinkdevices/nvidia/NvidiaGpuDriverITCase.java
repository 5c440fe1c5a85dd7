package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.config.DriverConfigException;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.deploy.YarnResourceDecorator;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeExecutable.Response;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost.Model;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarFile;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

/** The NVIDIA driver against fake nvidia-smi hosts and Flink's own discovery script. */
@DisplayName("The NVIDIA GPU driver")
@ExtendWith(StopDeviceMonitors.class)
class NvidiaGpuDriverITCase {

    @TempDir Path temp;
    private FakeHost host;
    private Path coordinationFile;

    @BeforeEach
    void createHost() {
        host = FakeHost.create(temp.resolve("host"));
        coordinationFile = temp.resolve("gpu-coordination");
    }

    private ExternalResourceDriver driver(Map<String, String> env, Map<String, String> params)
            throws Exception {
        Configuration full = new Configuration();
        params.forEach((k, v) -> full.setString("external-resource.gpu.param." + k, v));
        return new NvidiaGpuDriverFactory(env)
                .createExternalResourceDriver(
                        new DelegatingConfiguration(full, "external-resource.gpu.param."));
    }

    private ExternalResourceDriver driver(Map<String, String> params) throws Exception {
        return driver(Map.of(), params);
    }

    private Map<String, String> smi(Path program, String... more) {
        Map<String, String> p = new HashMap<>();
        p.put("backend", "nvidia-smi");
        p.put("nvidia-smi.path", program.toString());
        // discovery's own runs only (the monitor's metrics query is NvidiaMonitorTest's)
        p.put("monitor.interval", "0");
        for (int i = 0; i < more.length; i += 2) {
            p.put(more[i], more[i + 1]);
        }
        return p;
    }

    private Map<String, String> coordinated(Map<String, String> params) {
        Map<String, String> p = new HashMap<>(params);
        p.put("coordination.enabled", "true");
        p.put("coordination.file", coordinationFile.toString());
        return p;
    }

    private static List<GpuInfo> gpus(Set<? extends ExternalResourceInfo> infos) {
        return infos.stream().map(GpuInfo::from).collect(Collectors.toList());
    }

    /** Nothing recorded as taken: the file was never written, or holds no device id. */
    private void assertNothingRecorded() throws Exception {
        if (Files.exists(coordinationFile)) {
            assertThat(Files.readString(coordinationFile)).doesNotContain("GPU-").doesNotContain("MIG-");
        }
    }

    @Nested
    @DisplayName("with the nvidia-smi backend")
    class NvidiaSmi {

        @Test
        @DisplayName("hands out the first GPUs of one nvidia-smi run, with every field, and runs nothing when created")
        void readsEveryField() throws Exception {
            Path program =
                    FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 2).gpu(Model.T4).installOn(host);
            ExternalResourceDriver driver = driver(smi(program));
            FakeExecutable tool = host.executable("nvidia-smi");
            assertThat(tool.invocations()).isEmpty();

            List<GpuInfo> gpus = gpus(driver.retrieveResourceInfo(3));

            assertThat(tool.invocations()).containsExactly(FakeNvidiaHost.QUERY);
            assertThat(gpus).extracting(GpuInfo::getIndex).containsExactly(0, 1, 2);
            GpuInfo h100 = gpus.get(0);
            assertThat(h100.getUuid()).hasValue(FakeNvidiaHost.gpuUuid(0));
            assertThat(h100.getName()).hasValue("NVIDIA H100 80GB HBM3");
            assertThat(h100.getMemoryBytes()).hasValue(81559L << 20);
            assertThat(h100.getArchitecture()).hasValue("sm_90");
            assertThat(h100.getPciAddress()).hasValue("0000:07:00.0");
            assertThat(h100.getVisibleDevicesValue()).hasValue(FakeNvidiaHost.gpuUuid(0));
            assertThat(gpus.get(2).getArchitecture()).hasValue("sm_75");
            assertThat(gpus.get(2).getPartition()).isEmpty();
        }

        @Test
        @DisplayName("retries without compute_cap on a driver older than 510")
        void oldDriver() throws Exception {
            Path program = FakeNvidiaHost.builder().gpus(Model.V100_SXM2_32GB, 2).oldDriver().installOn(host);

            List<GpuInfo> gpus = gpus(driver(smi(program)).retrieveResourceInfo(2));

            assertThat(host.executable("nvidia-smi").invocations())
                    .containsExactly(FakeNvidiaHost.QUERY, FakeNvidiaHost.QUERY_WITHOUT_COMPUTE_CAP);
            assertThat(gpus).extracting(GpuInfo::getName).containsOnly(java.util.Optional.of("Tesla V100-SXM2-32GB"));
            assertThat(gpus.get(0).getArchitecture()).isEmpty();
        }

        @Test
        @DisplayName("reads output with CR LF line ends")
        void crlf() throws Exception {
            Path program = FakeNvidiaHost.builder().gpus(Model.A100_PCIE_40GB, 2).windowsLineEnds().installOn(host);

            assertThat(gpus(driver(smi(program)).retrieveResourceInfo(2)))
                    .extracting(GpuInfo::getUuid)
                    .containsExactly(
                            java.util.Optional.of(FakeNvidiaHost.gpuUuid(0)),
                            java.util.Optional.of(FakeNvidiaHost.gpuUuid(1)));
        }

        @Test
        @DisplayName("looks nvidia-smi up on the TaskManager's PATH when no path is configured")
        void pathLookup() throws Exception {
            FakeNvidiaHost.installH100s(host, 1);
            ExternalResourceDriver driver =
                    driver(Map.of("PATH", "/no/such/dir:" + host.bin()), Map.of("backend", "nvidia-smi"));

            assertThat(gpus(driver.retrieveResourceInfo(1))).hasSize(1);
        }

        @Test
        @DisplayName("honors the TaskManager's CUDA_VISIBLE_DEVICES, by index or UUID")
        void visibleDevices() throws Exception {
            Path program = FakeNvidiaHost.installH100s(host, 4);

            List<GpuInfo> gpus =
                    gpus(driver(Map.of("CUDA_VISIBLE_DEVICES", "3," + FakeNvidiaHost.gpuUuid(1)), smi(program))
                            .retrieveResourceInfo(2));

            assertThat(gpus).extracting(GpuInfo::getIndex).containsExactly(3, 1);
            assertThatThrownBy(() -> driver(Map.of("CUDA_VISIBLE_DEVICES", "NoDevFiles"), smi(program)).retrieveResourceInfo(1))
                    .hasMessageContaining("CUDA_VISIBLE_DEVICES='NoDevFiles' hides every GPU")
                    .hasMessageContaining("the host has 4");
        }

        @Test
        @DisplayName("offers the MIG devices of one profile as units, with their UUIDs and Kubernetes resource")
        void mig() throws Exception {
            Path program =
                    FakeNvidiaHost.builder()
                            .gpu(Model.A100_SXM_80GB, "3g.40gb", "1g.10gb", "1g.10gb")
                            .gpu(Model.A100_SXM_80GB)
                            .gpu(Model.A100_SXM_80GB, "1g.10gb")
                            .installOn(host);
            ExternalResourceDriver driver = driver(smi(program, "mig", "true", "mig.profile", "1g.10gb"));

            List<GpuInfo> units = gpus(driver.retrieveResourceInfo(3));

            assertThat(units)
                    .extracting(g -> g.getUuid().orElseThrow())
                    .containsExactly(
                            FakeNvidiaHost.migUuid(0, 1), FakeNvidiaHost.migUuid(0, 2), FakeNvidiaHost.migUuid(2, 0));
            assertThat(units).extracting(GpuInfo::getIndex).containsExactly(0, 0, 2);
            assertThat(units.get(0).getPartition()).hasValue("1g.10gb");
            assertThat(units.get(0).getVisibleDevicesValue()).hasValue(FakeNvidiaHost.migUuid(0, 1));
            assertThat(units.get(0).getArchitecture()).hasValue("sm_80");
            assertThat(((KubernetesResourceDecorator) driver).kubernetesResources(3))
                    .containsExactly(Map.entry("nvidia.com/mig-1g.10gb", 3L));
            assertThatThrownBy(() -> driver.retrieveResourceInfo(4))
                    .hasMessageContaining("Asked for 4 MIG devices of profile 1g.10gb");
        }

        @Test
        @DisplayName("asks Kubernetes for nvidia.com/gpu and Yarn for yarn.io/gpu")
        void decorators() throws Exception {
            ExternalResourceDriver driver = driver(smi(FakeNvidiaHost.installH100s(host, 1)));

            assertThat(((KubernetesResourceDecorator) driver).kubernetesResources(2))
                    .containsExactly(Map.entry("nvidia.com/gpu", 2L));
            assertThat(((YarnResourceDecorator) driver).yarnResources(2))
                    .containsExactly(Map.entry("yarn.io/gpu", 2L));
        }
    }

    @Nested
    @DisplayName("with coordination on")
    class Coordination {

        @Test
        @DisplayName("records GPUs by UUID, so a second TaskManager of the host gets the others")
        void secondTaskManagerGetsTheOthers() throws Exception {
            Path program = FakeNvidiaHost.installH100s(host, 3);

            List<GpuInfo> first = gpus(driver(coordinated(smi(program))).retrieveResourceInfo(2));
            assertThat(first).extracting(GpuInfo::getIndex).containsExactly(0, 1);
            assertThat(Files.readString(coordinationFile)).contains(FakeNvidiaHost.gpuUuid(0));

            ExternalResourceDriver second = driver(coordinated(smi(program)));
            assertThatThrownBy(() -> second.retrieveResourceInfo(2))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining(coordinationFile.toString());
        }
    }

    @Nested
    @DisplayName("gives one clear error and records no device for")
    class BadInput {

        @Test
        @DisplayName("an unknown backend, naming the key and the known values")
        void unknownBackend() {
            assertThatThrownBy(() -> driver(coordinated(Map.of("backend", "cuda"))))
                    .isInstanceOf(DriverConfigException.class)
                    .hasMessageContaining("external-resource.gpu.param.backend")
                    .hasMessageContaining("'cuda'")
                    .hasMessageContaining("nvidia-smi");
        }

        @Test
        @DisplayName("a configured nvidia-smi that does not exist or is not executable")
        void missingOrNotExecutable() throws Exception {
            assertThatThrownBy(() -> driver(coordinated(smi(Path.of("/no/such/nvidia-smi")))))
                    .isInstanceOf(DriverConfigException.class)
                    .hasMessageContaining("external-resource.gpu.param.nvidia-smi.path")
                    .hasMessageContaining("/no/such/nvidia-smi");
            Path plain = Files.writeString(temp.resolve("nvidia-smi"), "#!/bin/sh\n");
            Files.setPosixFilePermissions(plain, PosixFilePermissions.fromString("rw-r--r--"));
            assertThatThrownBy(() -> driver(coordinated(smi(plain))))
                    .hasMessageContaining("external-resource.gpu.param.nvidia-smi.path")
                    .hasMessageContaining("not executable");
            assertNothingRecorded();
        }

        @Test
        @DisplayName("nvidia-smi not on the PATH, naming the key to set")
        void notOnPath() throws Exception {
            ExternalResourceDriver driver =
                    driver(Map.of("PATH", temp.toString()), coordinated(Map.of("backend", "nvidia-smi")));

            assertThatThrownBy(() -> driver.retrieveResourceInfo(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("nvidia-smi is not on the TaskManager's PATH")
                    .hasMessageContaining("external-resource.gpu.param.nvidia-smi.path");
            assertNothingRecorded();
        }

        @Test
        @DisplayName("a non-zero exit, with the exit code and what nvidia-smi said")
        void nonZeroExit() throws Exception {
            host.install(
                    FakeExecutable.named("nvidia-smi")
                            .respond(Response.failure(9, "")
                                    .withStdout("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n")));
            ExternalResourceDriver driver = driver(coordinated(smi(host.bin("nvidia-smi"))));

            assertThatThrownBy(() -> driver.retrieveResourceInfo(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("external-resource.gpu.param.nvidia-smi.path")
                    .hasMessageContaining("exited with code 9")
                    .hasMessageContaining("couldn't communicate with the NVIDIA driver");
            assertNothingRecorded();
        }

        @Test
        @DisplayName("garbage or truncated output, quoting the line")
        void garbageAndTruncated() throws Exception {
            host.install(FakeExecutable.named("nvidia-smi").stdout("\u0000\u0001 garbage \n"));
            ExternalResourceDriver garbage = driver(coordinated(smi(host.bin("nvidia-smi"))));
            assertThatThrownBy(() -> garbage.retrieveResourceInfo(1))
                    .hasMessageContaining(host.bin("nvidia-smi").toString())
                    .hasMessageContaining("unexpected line 1");

            String full = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 2).queryOutput();
            host.install(FakeExecutable.named("nvidia-smi").stdout(full.substring(0, full.length() - 30)));
            ExternalResourceDriver truncated = driver(coordinated(smi(host.bin("nvidia-smi"))));
            assertThatThrownBy(() -> truncated.retrieveResourceInfo(1))
                    .hasMessageContaining("unexpected line 2")
                    .hasMessageContaining("truncated");
            assertNothingRecorded();
        }

        @Test
        @DisplayName("fewer GPUs than the amount, naming external-resource.gpu.amount")
        void tooFew() throws Exception {
            ExternalResourceDriver driver = driver(coordinated(smi(FakeNvidiaHost.installH100s(host, 2))));

            assertThatThrownBy(() -> driver.retrieveResourceInfo(3))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("Asked for 3 NVIDIA GPUs")
                    .hasMessageContaining("found 2")
                    .hasMessageContaining("external-resource.gpu.amount");
            assertThatThrownBy(() -> driver.retrieveResourceInfo(0))
                    .hasMessageContaining("external-resource.gpu.amount")
                    .hasMessageContaining("at least 1 but is 0");
            assertNothingRecorded();
        }

        @Test
        @DisplayName("a CUDA_VISIBLE_DEVICES entry that matches nothing, naming the variable")
        void visibleEntryMatchesNothing() throws Exception {
            ExternalResourceDriver driver =
                    driver(Map.of("CUDA_VISIBLE_DEVICES", "0,GPU-nope"),
                            coordinated(smi(FakeNvidiaHost.installH100s(host, 2))));

            assertThatThrownBy(() -> driver.retrieveResourceInfo(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("CUDA_VISIBLE_DEVICES='0,GPU-nope'")
                    .hasMessageContaining("entry 'GPU-nope' matches no GPU");
            assertNothingRecorded();
        }

        @Test
        @DisplayName("nvidia-smi or a discovery script hanging past the timeout, naming the key")
        void hangs() throws Exception {
            host.install(FakeExecutable.named("nvidia-smi").stdout("0\n").delay(Duration.ofSeconds(30)));
            ExternalResourceDriver smiDriver =
                    driver(coordinated(smi(host.bin("nvidia-smi"), "timeout", "300 ms")));
            long start = System.nanoTime();
            assertThatThrownBy(() -> smiDriver.retrieveResourceInfo(1))
                    .hasMessageContaining("external-resource.gpu.param.nvidia-smi.path")
                    .hasMessageContaining("did not finish within 300 ms");

            Path script = host.install(FakeExecutable.named("discover.sh").stdout("0\n").delay(Duration.ofSeconds(30))).path();
            ExternalResourceDriver scriptDriver =
                    driver(coordinated(Map.of("backend", "script", "discovery-script.path", script.toString(), "timeout", "300 ms")));
            assertThatThrownBy(() -> scriptDriver.retrieveResourceInfo(1))
                    .hasMessageContaining("external-resource.gpu.param.discovery-script.path")
                    .hasMessageContaining("did not finish within 300 ms");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
            assertNothingRecorded();
        }

        @Test
        @DisplayName("coordination across mig settings: a GPU held whole excludes its MIG units, and a held unit its GPU")
        void coordinationAcrossMigSettings() throws Exception {
            Path program =
                    FakeNvidiaHost.builder()
                            .gpu(Model.A100_SXM_80GB, "1g.10gb", "1g.10gb")
                            .gpu(Model.A100_SXM_80GB, "1g.10gb")
                            .installOn(host);
            Map<String, String> whole = coordinated(smi(program));
            Map<String, String> units = coordinated(smi(program, "mig", "true", "mig.profile", "1g.10gb"));

            List<GpuInfo> gpu = gpus(driver(whole).retrieveResourceInfo(1));
            assertThat(gpu).extracting(g -> g.getUuid().orElseThrow()).containsExactly(FakeNvidiaHost.gpuUuid(0));
            List<GpuInfo> unit = gpus(driver(units).retrieveResourceInfo(1));
            assertThat(unit).extracting(g -> g.getUuid().orElseThrow()).containsExactly(FakeNvidiaHost.migUuid(1, 0));
            assertThat(Files.readString(coordinationFile))
                    .contains(FakeNvidiaHost.gpuUuid(1) + "/" + FakeNvidiaHost.migUuid(1, 0));
            assertThatThrownBy(() -> driver(units).retrieveResourceInfo(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("overlaps held " + FakeNvidiaHost.gpuUuid(0));
            assertThatThrownBy(() -> driver(whole).retrieveResourceInfo(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("0 of 2 discovered devices are free");
        }

        @Test
        @DisplayName("MIG asked for without a profile, or with another backend")
        void migParams() {
            assertThatThrownBy(() -> driver(Map.of("mig", "true", "backend", "jcuda")))
                    .isInstanceOf(DriverConfigException.class)
                    .hasMessageContaining("external-resource.gpu.param.mig.profile: is required")
                    .hasMessageContaining("external-resource.gpu.param.mig: MIG devices are found with backends nvml and nvidia-smi only");
            assertThatThrownBy(() -> driver(Map.of("mig", "true", "mig.profile", "1g.10gb", "discovery-script.args", "--x")))
                    .isInstanceOf(DriverConfigException.class)
                    .hasMessageContaining("external-resource.gpu.param.discovery-script.args asks for a discovery script");
        }
    }

    @Nested
    @DisplayName("with the jcuda backend")
    class JCuda {

        @Test
        @DisplayName("turns a missing libcuda.so.1 into an exception naming the library, never an Error")
        void missingLibcuda() throws Exception {
            assumeThat(libcudaPresent()).as("this host has no NVIDIA driver").isFalse();
            ExternalResourceDriver driver = driver(coordinated(Map.of("backend", "jcuda")));

            for (int attempt = 0; attempt < 2; attempt++) {
                assertThatThrownBy(() -> driver.retrieveResourceInfo(1))
                        .as("attempt %d (the second sees a class that failed to initialize)", attempt + 1)
                        .isInstanceOf(DeviceDriverException.class)
                        .hasMessageContaining("libcuda.so.1");
            }
            assertNothingRecorded();
        }

        @Test
        @DisplayName("is what auto falls back to after nvidia-smi, and auto names both reasons in order")
        void autoFallsBack() throws Exception {
            assumeThat(libcudaPresent()).as("this host has no NVIDIA driver").isFalse();
            ExternalResourceDriver driver = driver(Map.of("PATH", temp.toString()), Map.of());

            assertThatThrownBy(() -> driver.retrieveResourceInfo(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("No NVIDIA GPU backend works")
                    .hasMessageMatching("(?s).*nvidia-smi is not on the TaskManager's PATH.*then jcuda.*libcuda\\.so\\.1.*|(?s).*nvidia-smi.*not on the TaskManager's PATH.*jcuda.*libcuda\\.so\\.1.*");
        }

        @Test
        @DisplayName("on a host with a GPU, finds the same GPUs as the host's nvidia-smi, every field but the memory filled")
        void realGpu() throws Exception {
            assumeThat(libcudaPresent()).as("this host has an NVIDIA driver").isTrue();
            ExternalResourceDriver jcuda = driver(System.getenv(), Map.of("backend", "jcuda"));

            List<GpuInfo> found = gpus(jcuda.retrieveResourceInfo(1));

            GpuInfo gpu = found.get(0);
            assertThat(gpu.getUuid()).hasValueSatisfying(u -> assertThat(u).matches("GPU-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}"));
            assertThat(gpu.getArchitecture()).hasValueSatisfying(a -> assertThat(a).matches("sm_\\d{2,3}"));
            // memory-bytes is NVML's total, which CUDA cannot tell (it reports the total less
            // what the driver reserves): left unknown rather than a second meaning
            assertThat(gpu.getMemoryBytes()).isEmpty();
            assertThat(gpu.getPciAddress()).isPresent();
            if (System.getenv("CUDA_VISIBLE_DEVICES") == null) {
                List<GpuInfo> smi = gpus(driver(System.getenv(), Map.of("backend", "nvidia-smi")).retrieveResourceInfo(1));
                assertThat(gpu.getUuid()).isEqualTo(smi.get(0).getUuid());
                assertThat(gpu.getArchitecture()).isEqualTo(smi.get(0).getArchitecture());
                assertThat(gpu.getPciAddress()).isEqualTo(smi.get(0).getPciAddress());
            }
        }

        private boolean libcudaPresent() {
            for (String dir : List.of("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/nvidia/lib64")) {
                if (Files.exists(Path.of(dir, "libcuda.so.1"))) {
                    return true;
                }
            }
            return false;
        }
    }

    @Nested
    @DisplayName("with the script backend")
    class Script {

        /** Flink 2.3.0's nvidia-gpu-discovery.sh and gpu-discovery-common.sh, unpacked. */
        private Path flinkScript() throws Exception {
            Path jar = Path.of(System.getProperty("flink.gpu.plugin.jar", "target/flink-gpu-plugin/flink-external-resource-gpu.jar"));
            assumeThat(jar).as("Flink's GPU plugin jar (fetched in pre-integration-test)").isRegularFile();
            Path dir = Files.createDirectories(temp.resolve("flink-gpu"));
            try (JarFile jf = new JarFile(jar.toFile())) {
                for (String name : List.of("nvidia-gpu-discovery.sh", "gpu-discovery-common.sh")) {
                    try (InputStream in = jf.getInputStream(jf.getEntry(name))) {
                        Files.copy(in, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING);
                    }
                    Files.setPosixFilePermissions(dir.resolve(name), PosixFilePermissions.fromString("rwxr-xr-x"));
                }
            }
            return dir.resolve("nvidia-gpu-discovery.sh");
        }

        private Map<String, String> env() {
            return Map.of("PATH", host.bin() + ":/usr/bin:/bin");
        }

        @Test
        @DisplayName("with the shipped nvidia-gpu-discovery.sh and coordination (conf/examples/nvidia-gpu-script.yaml), a second TaskManager gets the GPUs the first does not hold")
        void shippedScriptWithCoordinationSeesEveryGpu() throws Exception {
            FakeNvidiaHost.installH100s(host, 4);
            // the script as the distribution ships it in plugins/nvidia/
            Path shipped = Path.of("../dist/src/main/dist/plugins/nvidia/nvidia-gpu-discovery.sh").toAbsolutePath().normalize();
            assertThat(shipped).isExecutable();
            Map<String, String> params =
                    coordinated(Map.of("backend", "script", "discovery-script.path", shipped.toString()));

            List<GpuInfo> first = gpus(driver(env(), params).retrieveResourceInfo(2));
            List<GpuInfo> second = gpus(driver(env(), params).retrieveResourceInfo(2));

            assertThat(first).extracting(GpuInfo::getIndex).containsExactly(0, 1);
            assertThat(second).extracting(GpuInfo::getIndex).containsExactly(2, 3);
            assertThatThrownBy(() -> driver(env(), params).retrieveResourceInfo(1))
                    .hasMessageContaining("0 of 4 discovered devices are free");
        }

        @Test
        @DisplayName("with coordination on, a script that lists only <amount> GPUs gets an error that says so")
        void scriptListingOnlyAmountIsNamed() throws Exception {
            Path script = host.install(FakeExecutable.named("discover.sh").stdout("0,1\n")).path();
            Map<String, String> params = coordinated(Map.of("backend", "script", "discovery-script.path", script.toString()));
            gpus(driver(env(), params).retrieveResourceInfo(2));
            assertThatThrownBy(() -> driver(env(), params).retrieveResourceInfo(2))
                    .hasMessageContaining("0 of 2 discovered devices are free")
                    .hasMessageContaining("listed only 2 GPUs: with coordination on it must list every GPU of the host when FLINK_DEVICES_LIST_ALL_GPUS=true is set");
        }

        @Test
        @DisplayName("runs Flink 2.3.0's own nvidia-gpu-discovery.sh unchanged, with Flink's keys only")
        void flinksScript() throws Exception {
            Path script = flinkScript();
            FakeNvidiaHost.installH100s(host, 4);

            // an existing Flink GPU configuration: only the factory class changed (auto picks the script)
            List<GpuInfo> gpus =
                    gpus(driver(env(), Map.of("discovery-script.path", script.toString())).retrieveResourceInfo(2));

            assertThat(gpus).extracting(GpuInfo::getIndex).containsExactly(0, 1);
            assertThat(gpus.get(0).getVisibleDevicesValue()).hasValue("0");
            assertThat(host.executable("nvidia-smi").invocations()).containsExactly(FakeNvidiaHost.FLINK_SCRIPT_QUERY);
        }

        @Test
        @DisplayName("passes discovery-script.args split on whitespace, as Flink does, so Flink's coordination mode works")
        void flinksArgs() throws Exception {
            Path script = flinkScript();
            FakeNvidiaHost.installH100s(host, 3);
            Path flinkFile = temp.resolve("flink-coordination");
            Map<String, String> params =
                    Map.of("backend", "script",
                            "discovery-script.path", script.toString(),
                            "discovery-script.args", "  --enable-coordination-mode   --coordination-file " + flinkFile);

            List<GpuInfo> first = gpus(driver(env(), params).retrieveResourceInfo(2));
            List<GpuInfo> second = gpus(driver(env(), params).retrieveResourceInfo(1));

            assertThat(first).extracting(GpuInfo::getIndex).containsExactly(0, 1);
            assertThat(second).extracting(GpuInfo::getIndex).containsExactly(2);
            assertThat(flinkFile).exists();
        }

        @Test
        @DisplayName("resolves a relative script path against FLINK_HOME, as Flink does")
        void relativeToFlinkHome() throws Exception {
            Path home = temp.resolve("flink-home");
            Path script = home.resolve("plugins/external-resource-gpu/nvidia-gpu-discovery.sh");
            Files.createDirectories(script.getParent());
            Files.writeString(script, "#!/bin/sh\necho 1,0\n");
            Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));

            List<GpuInfo> gpus =
                    gpus(driver(Map.of("FLINK_HOME", home.toString()), Map.of("backend", "script")).retrieveResourceInfo(2));

            assertThat(gpus).extracting(GpuInfo::getIndex).containsExactly(1, 0);
        }

        @Test
        @DisplayName("rejects an id that is not an index, naming the script's key")
        void notAnIndex() throws Exception {
            Path script = host.install(FakeExecutable.named("discover.sh").stdout("GPU-abc\n")).path();

            assertThatThrownBy(() -> driver(Map.of("backend", "script", "discovery-script.path", script.toString())).retrieveResourceInfo(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("external-resource.gpu.param.discovery-script.path")
                    .hasMessageContaining("'GPU-abc', which is not a GPU index");
        }
    }
}
