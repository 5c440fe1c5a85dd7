package io.flinkdevices.fpga;

import io.flinkdevices.sdk.info.DeviceSelection;
import io.flinkdevices.sdk.info.FpgaInfo;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.cluster.ResourceProbe;
import io.flinkdevices.testkit.cluster.SubtaskResources;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import static io.flinkdevices.fpga.RealOpenCl.OCLGRIND;
import static io.flinkdevices.fpga.RealOpenCl.POCL;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shaded plugin jar (the archive ships it in {@code plugins/fpga-opencl/}; here it sits in
 * {@code plugins/fpga/}) hands a real Flink job's tasks the OpenCL devices of PoCL and oclgrind,
 * with a program built on each.
 */
@DisplayName("The FPGA plugin jar in a local device cluster")
class FpgaDriverClusterITCase {

    @TempDir Path temp;

    @Test
    @DisplayName("gives every subtask oclgrind's simulator and PoCL's CPU, through Flink's plugin loading")
    void tasksReceiveTheDevices() throws Exception {
        RealOpenCl.assume(POCL, OCLGRIND);
        Path plugins = temp.resolve("plugins");
        Path folder = Files.createDirectories(plugins.resolve("fpga"));
        Files.copy(FpgaPluginJarITCase.pluginJar(), folder.resolve("flink-devices-fpga-plugin.jar"));
        Path program = Files.writeString(temp.resolve("vadd.cl"), OpenClDevicesITCase.VADD);

        Map<Integer, SubtaskResources> bySubtask;
        try (LocalDeviceCluster cluster =
                        LocalDeviceCluster.builder()
                                .pluginsDir(plugins)
                                .resource(
                                        "fpga",
                                        OpenClFpgaDriverFactory.class.getName(),
                                        2,
                                        Map.of(
                                                "device.types", "ACCELERATOR,CPU",
                                                "program.path", program.toString(),
                                                "program.build-options", "-DSCALE=1.0f"))
                                .taskManagers(1)
                                .slotsPerTaskManager(2)
                                .build()
                                .start()) {
            bySubtask = ResourceProbe.run(cluster.createEnvironment(), "fpga", 2);
        }

        assertThat(bySubtask).containsOnlyKeys(0, 1);
        for (SubtaskResources seen : bySubtask.values()) {
            assertThat(devices(seen))
                    .as("the devices subtask %d received", seen.subtaskIndex())
                    .startsWith(OCLGRIND + "/0/Oclgrind Simulator," + POCL + "/0/");
            assertThat(fpgas(seen).stream().map(f -> f.getBitstream().orElse("?")).distinct())
                    .containsExactly(program.toAbsolutePath().toString());
            assertThat(seen.createdByAnotherClassLoader()).as("infos come from the plugin's class loader").isTrue();
        }
        assertThat(picked(bySubtask.get(0))).isNotEqualTo(picked(bySubtask.get(1)));
    }

    @Test
    @DisplayName("two TaskManagers with coordination each get a different device")
    void coordinatedTaskManagers() throws Exception {
        RealOpenCl.assume(POCL, OCLGRIND);
        Path plugins = temp.resolve("plugins");
        Path folder = Files.createDirectories(plugins.resolve("fpga"));
        Files.copy(FpgaPluginJarITCase.pluginJar(), folder.resolve("flink-devices-fpga-plugin.jar"));
        Path coordination = temp.resolve("fpga.coordination");

        Map<Integer, SubtaskResources> bySubtask;
        try (LocalDeviceCluster cluster =
                        LocalDeviceCluster.builder()
                                .pluginsDir(plugins)
                                .resource(
                                        "fpga",
                                        OpenClFpgaDriverFactory.class.getName(),
                                        1,
                                        Map.of(
                                                "device.types", "ALL",
                                                "coordination.enabled", "true",
                                                "coordination.file", coordination.toString()))
                                .taskManagers(2)
                                .slotsPerTaskManager(1)
                                .build()
                                .start()) {
            bySubtask = ResourceProbe.run(cluster.createEnvironment(), "fpga", 2);
            assertThat(Files.readString(coordination))
                    .as("both devices recorded while the TaskManagers run")
                    .contains("Oclgrind/0/Oclgrind%20Simulator")
                    .contains("Portable%20Computing%20Language/0/");
        }

        assertThat(bySubtask).containsOnlyKeys(0, 1);
        assertThat(bySubtask.values()).extracting(FpgaDriverClusterITCase::devices)
                .as("one device per TaskManager, a different one each")
                .doesNotHaveDuplicates()
                .allSatisfy(d -> assertThat(d).doesNotContain(","));
    }

    private static List<FpgaInfo> fpgas(SubtaskResources seen) {
        return seen.infos().stream().map(FpgaInfo::from).toList();
    }

    /** The devices a subtask received as {@code platform/index/name}, sorted, comma-separated. */
    private static String devices(SubtaskResources seen) {
        TreeSet<String> devices = new TreeSet<>();
        for (FpgaInfo f : fpgas(seen)) {
            devices.add(f.getPlatform() + "/" + f.getDeviceIndex() + "/" + f.getDeviceName());
        }
        return String.join(",", devices);
    }

    /** The platform of the device job code on this subtask would use, as DeviceSelection picks. */
    private static String picked(SubtaskResources seen) {
        return DeviceSelection.forSubtask(seen.infos(), seen.subtaskIndex(), FpgaInfo::from)
                .map(FpgaInfo::getPlatform)
                .orElse("");
    }
}
