package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.info.DeviceSelection;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.util.CloseableIterator;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

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

        Map<Integer, Seen> bySubtask = new TreeMap<>();
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
                        .start();
                CloseableIterator<Seen> it =
                        cluster.createEnvironment()
                                .fromSequence(1, 8)
                                .setParallelism(1)
                                .rebalance()
                                .map(new GpuProbe())
                                .setParallelism(2)
                                .executeAndCollect()) {
            it.forEachRemaining(seen -> bySubtask.putIfAbsent(seen.subtask, seen));
        }

        assertThat(bySubtask).containsOnlyKeys(0, 1);
        for (Seen seen : bySubtask.values()) {
            assertThat(seen.uuids)
                    .as("the GPUs subtask %d received (amount 2 of the 3 listed)", seen.subtask)
                    .isEqualTo(FakeNvidiaHost.gpuUuid(0) + "," + FakeNvidiaHost.gpuUuid(1));
            assertThat(seen.details).isEqualTo("nvidia sm_90 CUDA_VISIBLE_DEVICES");
            assertThat(seen.loadedByPlugin).as("infos come from the plugin's class loader").isTrue();
        }
        assertThat(bySubtask.get(0).picked).isEqualTo(FakeNvidiaHost.gpuUuid(0));
        assertThat(bySubtask.get(1).picked).isEqualTo(FakeNvidiaHost.gpuUuid(1));
        assertThat(host.executable("nvidia-smi").invocations())
                .as("the TaskManager ran one nvidia-smi query")
                .containsExactly(FakeNvidiaHost.QUERY);
    }

    /** What job code does with the GPUs: read them typed, pick one per subtask. */
    public static final class GpuProbe extends RichMapFunction<Long, Seen> {
        private static final long serialVersionUID = 1L;

        @Override
        public Seen map(Long value) {
            Set<ExternalResourceInfo> infos = getRuntimeContext().getExternalResourceInfos("gpu");
            Seen seen = new Seen();
            seen.subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            TreeSet<String> uuids = new TreeSet<>();
            TreeSet<String> details = new TreeSet<>();
            for (ExternalResourceInfo info : infos) {
                GpuInfo gpu = GpuInfo.from(info);
                uuids.add(gpu.getUuid().orElse("?"));
                details.add(gpu.getVendor() + " " + gpu.getArchitecture().orElse("?") + " "
                        + gpu.getVisibleDevicesEnv().orElse("?"));
                seen.loadedByPlugin = info.getClass().getClassLoader() != GpuInfo.class.getClassLoader();
            }
            seen.uuids = String.join(",", uuids);
            seen.details = String.join(";", details);
            seen.picked =
                    DeviceSelection.forSubtask(infos, seen.subtask, GpuInfo::from)
                            .flatMap(GpuInfo::getUuid)
                            .orElse("");
            return seen;
        }
    }

    /** What one subtask saw; a Flink POJO. */
    public static final class Seen {
        public int subtask;
        public String uuids = "";
        public String details = "";
        public String picked = "";
        public boolean loadedByPlugin;

        /** For Flink's POJO serializer. */
        public Seen() {}

        @Override
        public String toString() {
            return "subtask " + subtask + " saw [" + uuids + "] and picked " + picked;
        }
    }
}
