package io.flinkdevices.compat;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.info.FpgaInfo;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.sdk.info.RdmaInfo;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.cluster.ResourceProbe;
import io.flinkdevices.testkit.cluster.SubtaskResources;
import io.flinkdevices.testkit.fake.FakeAmdHost;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;
import io.flinkdevices.testkit.host.HostLibraries;
import io.flinkdevices.testkit.plugin.PluginCheck;
import io.flinkdevices.testkit.plugin.PluginFolder;

import org.apache.flink.runtime.util.EnvironmentInformation;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The plugin jars the archive ships, on one older Flink release (this module's class path holds
 * only that release's jars): a TaskManager of that release loads each through its own
 * {@code PluginManager} and {@code ExternalResourceUtils}, and a one-task job of each resource
 * receives the devices: NVIDIA, AMD and RDMA on fake hosts, OpenCL on PoCL's CPU device where PoCL
 * is installed (skipped with the reason where not).
 */
@DisplayName("The shipped driver plugins on an older Flink release")
class FlinkReleaseITCase {

    @TempDir Path temp;

    @Test
    @DisplayName("a TaskManager of this release loads the NVIDIA, AMD, RDMA and OpenCL plugin jars and its tasks receive their devices")
    void pluginsHandOutDevices() throws Exception {
        String release = System.getProperty("compat.flink.version");
        assertThat(EnvironmentInformation.getVersion()).as("the Flink on this module's class path").isEqualTo(release);

        Path plugins = temp.resolve("plugins");
        String noOpenCl = openClMissing();
        List<String> drivers = noOpenCl == null ? List.of("nvidia", "amd", "rdma", "fpga-opencl") : List.of("nvidia", "amd", "rdma");
        for (String driver : drivers) {
            Path jar = PluginCheck.builtJar("compat.plugin." + driver);
            PluginFolder.builder(driver).includeJar(jar).buildInto(plugins);
        }
        FakeHost host = FakeHost.create(temp.resolve("host"));
        Path smi = FakeNvidiaHost.installH100s(host, 2);
        FakeAmdHost.Installed amd =
                FakeAmdHost.builder().gpus(FakeAmdHost.Model.MI300X, 2, "SPX", "NPS1").installOn(FakeHost.create(temp.resolve("amd")));
        FakeFileTree rdma =
                FakeRdmaHost.builder().roce("mlx5_bond_0", "bond0", "10.1.2.3", 100).installOn(FakeHost.create(temp.resolve("rdma")));

        Map<Integer, SubtaskResources> gpus;
        Map<Integer, SubtaskResources> amdGpus;
        Map<Integer, SubtaskResources> ports;
        Map<Integer, SubtaskResources> fpgas = null;
        LocalDeviceCluster.Builder builder =
                LocalDeviceCluster.builder()
                        .pluginsDir(plugins)
                        .resource("gpu", "io.flinkdevices.nvidia.NvidiaGpuDriverFactory", 2,
                                Map.of("backend", "nvidia-smi", "nvidia-smi.path", smi.toString()))
                        .resource("amdgpu", "io.flinkdevices.amd.AmdGpuDriverFactory", 1,
                                Map.of("backend", "sysfs", "sysfs.root", amd.sys().root().toString(),
                                        "dev.root", amd.dev().root().toString()))
                        .resource("rdma", "io.flinkdevices.rdma.RdmaDriverFactory", 1,
                                Map.of("sysfs.root", rdma.root().toString()));
        if (noOpenCl == null) {
            // PoCL's CPU device, registered system-wide by its package
            builder.resource("fpga", "io.flinkdevices.fpga.OpenClFpgaDriverFactory", 1,
                    Map.of("device.types", "CPU", "platform.pattern", "Portable"));
        } else {
            System.out.println("Flink " + release + ": the OpenCL driver is not checked: " + noOpenCl);
        }
        try (LocalDeviceCluster cluster = builder.build().start()) {
            gpus = ResourceProbe.run(cluster.createEnvironment(), "gpu", 1);
            amdGpus = ResourceProbe.run(cluster.createEnvironment(), "amdgpu", 1);
            ports = ResourceProbe.run(cluster.createEnvironment(), "rdma", 1);
            if (noOpenCl == null) {
                fpgas = ResourceProbe.run(cluster.createEnvironment(), "fpga", 1);
            }
        }

        System.out.println("Flink " + release + ": " + describe(gpus) + "; " + describe(amdGpus) + "; " + describe(ports)
                + (fpgas == null ? "" : "; " + describe(fpgas)));
        if (fpgas != null) {
            assertThat(fpgas.get(0).infos()).hasSize(1);
            assertThat(FpgaInfo.from(fpgas.get(0).infos().iterator().next()).getPlatform()).contains("Portable");
            assertThat(fpgas.get(0).createdByAnotherClassLoader()).isTrue();
        }
        assertThat(uuids(gpus)).containsExactlyInAnyOrder(FakeNvidiaHost.gpuUuid(0), FakeNvidiaHost.gpuUuid(1));
        assertThat(amdGpus.get(0).infos()).hasSize(1);
        assertThat(GpuInfo.from(amdGpus.get(0).infos().iterator().next()).getVendor()).isEqualTo("amd");
        assertThat(ports.get(0).infos()).hasSize(1);
        assertThat(RdmaInfo.from(ports.get(0).infos().iterator().next()).getDevice()).isEqualTo("mlx5_bond_0");
        for (Map<Integer, SubtaskResources> seen : List.of(gpus, amdGpus, ports)) {
            assertThat(seen.get(0).createdByAnotherClassLoader()).as("infos come from the plugin's class loader").isTrue();
        }
    }

    /** Null when PoCL is registered system-wide and the OpenCL loader is installed; else why not. */
    private static String openClMissing() {
        if (!HostLibraries.present("libOpenCL.so.1")) {
            return "no OpenCL ICD loader (libOpenCL.so.1)";
        }
        Path vendors = Path.of("/etc/OpenCL/vendors");
        try (java.util.stream.Stream<Path> icds = java.nio.file.Files.list(vendors)) {
            if (icds.noneMatch(p -> p.getFileName().toString().startsWith("pocl"))) {
                return "PoCL is not registered in " + vendors;
            }
        } catch (java.io.IOException e) {
            return "no " + vendors + " (" + e.getMessage() + ")";
        }
        return null;
    }

    private static List<String> uuids(Map<Integer, SubtaskResources> seen) {
        return seen.get(0).infos().stream().map(i -> GpuInfo.from(i).getUuid().orElse("?")).collect(Collectors.toList());
    }

    private static String describe(Map<Integer, SubtaskResources> seen) {
        return seen.get(0).infos().size() + " x " + seen.get(0).infos().stream().map(i -> i.getProperty("kind").orElse("?")).distinct().collect(Collectors.joining(","));
    }
}
