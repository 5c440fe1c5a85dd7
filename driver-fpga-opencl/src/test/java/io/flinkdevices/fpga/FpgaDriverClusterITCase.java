package io.flinkdevices.fpga;

import io.flinkdevices.sdk.info.DeviceSelection;
import io.flinkdevices.sdk.info.FpgaInfo;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.util.CloseableIterator;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static io.flinkdevices.fpga.RealOpenCl.OCLGRIND;
import static io.flinkdevices.fpga.RealOpenCl.POCL;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shaded plugin jar, as shipped in {@code plugins/fpga/}, hands a real Flink job's tasks the
 * OpenCL devices of PoCL and oclgrind, with a program built on each.
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

        Map<Integer, Seen> bySubtask = new TreeMap<>();
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
                                .start();
                CloseableIterator<Seen> it =
                        cluster.createEnvironment()
                                .fromSequence(1, 8)
                                .setParallelism(1)
                                .rebalance()
                                .map(new FpgaProbe())
                                .setParallelism(2)
                                .executeAndCollect()) {
            it.forEachRemaining(seen -> bySubtask.putIfAbsent(seen.subtask, seen));
        }

        assertThat(bySubtask).containsOnlyKeys(0, 1);
        for (Seen seen : bySubtask.values()) {
            assertThat(seen.devices)
                    .as("the devices subtask %d received", seen.subtask)
                    .startsWith(OCLGRIND + "/0/Oclgrind Simulator," + POCL + "/0/");
            assertThat(seen.bitstreams).isEqualTo(program.toAbsolutePath().toString());
            assertThat(seen.loadedByPlugin).as("infos come from the plugin's class loader").isTrue();
        }
        assertThat(bySubtask.get(0).picked).isNotEqualTo(bySubtask.get(1).picked);
    }

    @Test
    @DisplayName("two TaskManagers with coordination each get a different device")
    void coordinatedTaskManagers() throws Exception {
        RealOpenCl.assume(POCL, OCLGRIND);
        Path plugins = temp.resolve("plugins");
        Path folder = Files.createDirectories(plugins.resolve("fpga"));
        Files.copy(FpgaPluginJarITCase.pluginJar(), folder.resolve("flink-devices-fpga-plugin.jar"));
        Path coordination = temp.resolve("fpga.coordination");

        Map<Integer, Seen> bySubtask = new TreeMap<>();
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
                                .start();
                CloseableIterator<Seen> it =
                        cluster.createEnvironment()
                                .fromSequence(1, 8)
                                .setParallelism(1)
                                .rebalance()
                                .map(new FpgaProbe())
                                .setParallelism(2)
                                .executeAndCollect()) {
            it.forEachRemaining(seen -> bySubtask.putIfAbsent(seen.subtask, seen));
            assertThat(Files.readString(coordination))
                    .as("both devices recorded while the TaskManagers run")
                    .contains("Oclgrind/0/Oclgrind%20Simulator")
                    .contains("Portable%20Computing%20Language/0/");
        }

        assertThat(bySubtask).containsOnlyKeys(0, 1);
        assertThat(bySubtask.values()).extracting(seen -> seen.devices)
                .as("one device per TaskManager, a different one each")
                .doesNotHaveDuplicates()
                .allSatisfy(d -> assertThat(d).doesNotContain(","));
    }

    /** What job code does with the devices: read them typed, pick one per subtask. */
    public static final class FpgaProbe extends RichMapFunction<Long, Seen> {
        private static final long serialVersionUID = 1L;

        @Override
        public Seen map(Long value) {
            Set<ExternalResourceInfo> infos = getRuntimeContext().getExternalResourceInfos("fpga");
            Seen seen = new Seen();
            seen.subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            TreeSet<String> devices = new TreeSet<>();
            TreeSet<String> bitstreams = new TreeSet<>();
            for (ExternalResourceInfo info : infos) {
                FpgaInfo fpga = FpgaInfo.from(info);
                devices.add(fpga.getPlatform() + "/" + fpga.getDeviceIndex() + "/" + fpga.getDeviceName());
                bitstreams.add(fpga.getBitstream().orElse("?"));
                seen.loadedByPlugin = info.getClass().getClassLoader() != FpgaInfo.class.getClassLoader();
            }
            seen.devices = String.join(",", devices);
            seen.bitstreams = String.join(",", bitstreams);
            seen.picked =
                    DeviceSelection.forSubtask(infos, seen.subtask, FpgaInfo::from)
                            .map(FpgaInfo::getPlatform)
                            .orElse("");
            return seen;
        }
    }

    /** What one subtask saw; a Flink POJO. */
    public static final class Seen {
        public int subtask;
        public String devices = "";
        public String bitstreams = "";
        public String picked = "";
        public boolean loadedByPlugin;

        /** For Flink's POJO serializer. */
        public Seen() {}

        @Override
        public String toString() {
            return "subtask " + subtask + " saw [" + devices + "] and picked " + picked;
        }
    }
}
