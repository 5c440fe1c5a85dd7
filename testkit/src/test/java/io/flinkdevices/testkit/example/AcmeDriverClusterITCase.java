package io.flinkdevices.testkit.example;

import io.flinkdevices.example.acme.AcmeTensorStickDriverFactory;
import io.flinkdevices.sdk.info.DeviceSelection;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.plugin.PluginCheck;
import io.flinkdevices.testkit.plugin.PluginFolder;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The example driver, packaged as a plugin folder, hands a real Flink job's tasks the sticks a
 * fake {@code acme-smi} lists: the last step of a third-party driver's tests.
 */
@DisplayName("The Acme Tensor Stick driver in a local device cluster")
class AcmeDriverClusterITCase {

    @TempDir Path temp;

    @Test
    @DisplayName("gives every subtask the sticks acme-smi lists, through Flink's plugin loading")
    void tasksReceiveTheSticks() throws Exception {
        FakeHost host = FakeHost.create(temp.resolve("host"));
        Path smi = FakeAcmeSmi.install(host, 3);
        Path plugins = temp.resolve("plugins");
        Path jar =
                PluginFolder.builder("acme")
                        .includePackageOf(AcmeTensorStickDriverFactory.class)
                        .includeSdk()
                        .factory(AcmeTensorStickDriverFactory.class)
                        .buildInto(plugins);
        assertThat(PluginCheck.check(jar).factoryClassName())
                .isEqualTo(AcmeTensorStickDriverFactory.class.getName());

        Map<Integer, Seen> bySubtask;
        try (LocalDeviceCluster cluster =
                LocalDeviceCluster.builder()
                        .pluginsDir(plugins)
                        .resource(
                                "acme",
                                AcmeTensorStickDriverFactory.class.getName(),
                                2,
                                Map.of("acme-smi.path", smi.toString(), "timeout", "5 s"))
                        .taskManagers(1)
                        .slotsPerTaskManager(2)
                        .build()
                        .start()) {
            bySubtask = runProbeJob(cluster.createEnvironment(), 2);
        }

        assertThat(bySubtask).containsOnlyKeys(0, 1);
        for (Seen seen : bySubtask.values()) {
            assertThat(seen.uuids)
                    .as("the sticks subtask %d received (amount 2 of the 3 listed)", seen.subtask)
                    .isEqualTo(FakeAcmeSmi.uuid(0) + "," + FakeAcmeSmi.uuid(1));
            assertThat(seen.vendors).isEqualTo("acme");
            assertThat(seen.loadedByPlugin)
                    .as("the infos come from the plugin's class loader, not the job's")
                    .isTrue();
        }
        assertThat(bySubtask.get(0).picked).isEqualTo(FakeAcmeSmi.uuid(0));
        assertThat(bySubtask.get(1).picked).isEqualTo(FakeAcmeSmi.uuid(1));
        FakeExecutable tool = host.executable("acme-smi");
        assertThat(tool.invocations())
                .as("the TaskManager ran the fake acme-smi once, as the driver documents")
                .containsExactly(List.of("--list"));
    }

    /** A job of {@code parallelism} probes; one observation per subtask. */
    private static Map<Integer, Seen> runProbeJob(StreamExecutionEnvironment env, int parallelism)
            throws Exception {
        Map<Integer, Seen> bySubtask = new TreeMap<>();
        try (CloseableIterator<Seen> it =
                env.fromSequence(1, 4L * parallelism)
                        .setParallelism(1)
                        .rebalance()
                        .map(new StickProbe())
                        .setParallelism(parallelism)
                        .executeAndCollect()) {
            it.forEachRemaining(seen -> bySubtask.putIfAbsent(seen.subtask, seen));
        }
        return bySubtask;
    }

    /** What job code does with the sticks: read them typed, pick one per subtask. */
    public static final class StickProbe extends RichMapFunction<Long, Seen> {
        private static final long serialVersionUID = 1L;

        @Override
        public Seen map(Long value) {
            Set<ExternalResourceInfo> infos = getRuntimeContext().getExternalResourceInfos("acme");
            int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            Seen seen = new Seen();
            seen.subtask = subtask;
            TreeSet<String> uuids = new TreeSet<>();
            TreeSet<String> vendors = new TreeSet<>();
            for (ExternalResourceInfo info : infos) {
                GpuInfo stick = GpuInfo.from(info);
                uuids.add(stick.getUuid().orElse("?"));
                vendors.add(stick.getVendor());
                seen.loadedByPlugin = info.getClass().getClassLoader() != GpuInfo.class.getClassLoader();
            }
            seen.uuids = String.join(",", uuids);
            seen.vendors = String.join(",", vendors);
            seen.picked =
                    DeviceSelection.forSubtask(infos, subtask, GpuInfo::from)
                            .flatMap(GpuInfo::getUuid)
                            .orElse("");
            return seen;
        }
    }

    /** What one subtask saw; a Flink POJO. */
    public static final class Seen {
        public int subtask;
        public String uuids = "";
        public String vendors = "";
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
