package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.info.DeviceSelection;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.cluster.ResourceProbe;
import io.flinkdevices.testkit.cluster.SubtaskResources;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;


import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shaded plugin jar, as shipped in {@code plugins/nvidia/}, hands a real Flink job's tasks the
 * GPUs a fake {@code nvidia-smi} lists.
 */
@DisplayName("The NVIDIA plugin jar in a local device cluster")
class NvidiaDriverClusterITCase {

    @TempDir Path temp;

    @Test
    @DisplayName("gives every subtask the GPUs nvidia-smi lists, through Flink's plugin loading")
    void tasksReceiveTheGpus() throws Exception {
        FakeHost host = FakeHost.create(temp.resolve("host"));
        Path smi = FakeNvidiaHost.installH100s(host, 3);
        Path plugins = temp.resolve("plugins");
        Path folder = Files.createDirectories(plugins.resolve("nvidia"));
        Path jar = NvidiaPluginJarITCase.pluginJar();
        Files.copy(jar, folder.resolve(jar.getFileName()));

        Map<Integer, SubtaskResources> bySubtask;
        try (LocalDeviceCluster cluster =
                LocalDeviceCluster.builder()
                        .pluginsDir(plugins)
                        .resource(
                                "gpu",
                                NvidiaGpuDriverFactory.class.getName(),
                                2,
                                Map.of("nvidia-smi.path", smi.toString(), "timeout", "5 s"))
                        .taskManagers(1)
                        .slotsPerTaskManager(2)
                        .build()
                        .start()) {
            bySubtask = ResourceProbe.run(cluster.createEnvironment(), "gpu", 2);
        }

        assertThat(bySubtask).containsOnlyKeys(0, 1);
        for (SubtaskResources seen : bySubtask.values()) {
            List<GpuInfo> gpus = seen.infos().stream().map(GpuInfo::from).toList();
            assertThat(gpus)
                    .as("the GPUs subtask %d received (amount 2 of the 3 listed)", seen.subtaskIndex())
                    .extracting(g -> g.getUuid().orElse("?"))
                    .containsExactlyInAnyOrder(FakeNvidiaHost.gpuUuid(0), FakeNvidiaHost.gpuUuid(1));
            assertThat(gpus)
                    .extracting(g -> g.getVendor() + " " + g.getArchitecture().orElse("?") + " "
                            + g.getVisibleDevicesEnv().orElse("?"))
                    .containsOnly("nvidia sm_90 CUDA_VISIBLE_DEVICES");
            assertThat(seen.createdByAnotherClassLoader()).as("infos come from the plugin's class loader").isTrue();
        }
        assertThat(picked(bySubtask.get(0))).isEqualTo(FakeNvidiaHost.gpuUuid(0));
        assertThat(picked(bySubtask.get(1))).isEqualTo(FakeNvidiaHost.gpuUuid(1));
        // besides, its monitor runs FakeNvidiaHost.MONITOR_QUERY once per interval
        assertThat(host.executable("nvidia-smi").invocations())
                .as("the TaskManager ran one nvidia-smi discovery query")
                .filteredOn(args -> !args.equals(FakeNvidiaHost.MONITOR_QUERY))
                .containsExactly(FakeNvidiaHost.QUERY);
    }

    /** The GPU job code on this subtask would use: one per subtask, as DeviceSelection picks. */
    private static String picked(SubtaskResources seen) {
        return DeviceSelection.forSubtask(seen.infos(), seen.subtaskIndex(), GpuInfo::from)
                .flatMap(GpuInfo::getUuid)
                .orElse("");
    }
}
