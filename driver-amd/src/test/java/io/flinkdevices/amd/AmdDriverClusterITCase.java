package io.flinkdevices.amd;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.cluster.ResourceProbe;
import io.flinkdevices.testkit.cluster.SubtaskResources;
import io.flinkdevices.testkit.fake.FakeAmdHost;
import io.flinkdevices.testkit.fake.FakeHost;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The shaded plugin jar, as shipped in {@code plugins/amd/}, hands a real Flink job's tasks the
 * compute partitions of a fake MI300X host read from sysfs.
 */
@DisplayName("The AMD plugin jar in a local device cluster")
class AmdDriverClusterITCase {

    @TempDir Path temp;

    @Test
    @DisplayName("gives every subtask the MI300X partitions sysfs lists, through Flink's plugin loading")
    void tasksReceivePartitions() throws Exception {
        FakeHost host = FakeHost.create(temp.resolve("host"));
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(FakeAmdHost.Model.MI300X, 2, "CPX", "NPS4").installOn(host);
        Path plugins = temp.resolve("plugins");
        Path folder = Files.createDirectories(plugins.resolve("amd"));
        Path jar = AmdPluginJarITCase.pluginJar();
        Files.copy(jar, folder.resolve(jar.getFileName()));

        Map<Integer, SubtaskResources> bySubtask;
        try (LocalDeviceCluster cluster =
                LocalDeviceCluster.builder()
                        .pluginsDir(plugins)
                        .resource(
                                "gpu",
                                AmdGpuDriverFactory.class.getName(),
                                4,
                                Map.of(
                                        "unit", "partition",
                                        "sysfs.root", amd.sys().root().toString(),
                                        "dev.root", amd.dev().root().toString()))
                        .taskManagers(1)
                        .slotsPerTaskManager(2)
                        .build()
                        .start()) {
            bySubtask = ResourceProbe.run(cluster.createEnvironment(), "gpu", 2);
        }

        assertThat(bySubtask).containsOnlyKeys(0, 1);
        for (SubtaskResources seen : bySubtask.values()) {
            List<GpuInfo> parts = seen.infos().stream().map(GpuInfo::from).collect(Collectors.toList());
            assertThat(parts)
                    .as("the partitions subtask %d received (amount 4 of the 16)", seen.subtaskIndex())
                    .extracting(g -> g.getVisibleDevicesEnv().orElse("?") + "=" + g.getVisibleDevicesValue().orElse("?"))
                    .containsExactlyInAnyOrder(
                            "ROCR_VISIBLE_DEVICES=0", "ROCR_VISIBLE_DEVICES=1", "ROCR_VISIBLE_DEVICES=2", "ROCR_VISIBLE_DEVICES=3");
            assertThat(parts)
                    .extracting(g -> g.getVendor() + " " + g.getArchitecture().orElse("?") + " " + g.getPartition().orElse("?"))
                    .containsOnly("amd gfx942 CPX/NPS4");
            assertThat(seen.createdByAnotherClassLoader()).as("infos come from the plugin's class loader").isTrue();
        }
    }
}
