package io.flinkdevices.rdma;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.info.RdmaInfo;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.cluster.ResourceProbe;
import io.flinkdevices.testkit.cluster.SubtaskResources;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/** The shaded plugin jar, as shipped in {@code plugins/rdma/}, hands a real Flink job's tasks RDMA ports. */
@DisplayName("The RDMA plugin jar in a local device cluster")
class RdmaDriverClusterITCase {

    @TempDir Path temp;

    @Test
    @DisplayName("gives every subtask the healthy RoCE v2 port of a fake host, through Flink's plugin loading")
    void tasksReceivePorts() throws Exception {
        FakeFileTree sys =
                FakeRdmaHost.builder()
                        .infiniband("mlx5_0", 200, false)
                        .roce("mlx5_bond_0", "bond0", "10.1.2.3", 100)
                        .installOn(FakeHost.create(temp.resolve("host")));
        Path plugins = temp.resolve("plugins");
        Path folder = Files.createDirectories(plugins.resolve("rdma"));
        Path jar = RdmaPluginJarITCase.pluginJar();
        Files.copy(jar, folder.resolve(jar.getFileName()));

        Map<Integer, SubtaskResources> bySubtask;
        try (LocalDeviceCluster cluster =
                LocalDeviceCluster.builder()
                        .pluginsDir(plugins)
                        .resource("rdma", RdmaDriverFactory.class.getName(), 1, Map.of("sysfs.root", sys.root().toString()))
                        .taskManagers(1)
                        .slotsPerTaskManager(2)
                        .build()
                        .start()) {
            bySubtask = ResourceProbe.run(cluster.createEnvironment(), "rdma", 2);
        }

        assertThat(bySubtask).containsOnlyKeys(0, 1);
        for (SubtaskResources seen : bySubtask.values()) {
            assertThat(seen.infos()).hasSize(1);
            RdmaInfo port = RdmaInfo.from(seen.infos().iterator().next());
            assertThat(port.getDevice() + "/" + port.getPort()).isEqualTo("mlx5_bond_0/1");
            assertThat(port.getGid()).contains(FakeRdmaHost.ipv4Gid("10.1.2.3"));
            assertThat(port.getGidType()).contains("RoCE v2");
            assertThat(port.getNetdev()).contains("bond0");
            assertThat(seen.createdByAnotherClassLoader()).as("infos come from the plugin's class loader").isTrue();
        }
    }
}
