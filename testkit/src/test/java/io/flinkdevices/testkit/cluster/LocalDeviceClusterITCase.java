package io.flinkdevices.testkit.cluster;

import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.simulated.SimulatedDevices;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LocalDeviceClusterITCase {

    /** The UUIDs a subtask received, sorted and comma-separated. */
    static String uuids(SubtaskResources seen) {
        return String.join(",", new TreeSet<>(seen.values(GpuInfo.KEY_UUID)));
    }


    @Nested
    @DisplayName("one TaskManager with two slots and two simulated GPUs")
    class OneTaskManager {

        @RegisterExtension
        static final LocalDeviceClusterExtension CLUSTER =
                LocalDeviceClusterExtension.of(
                        LocalDeviceCluster.builder()
                                .simulatedGpus("gpu", 2, Map.of("count", "4"))
                                .slotsPerTaskManager(2));

        @Test
        @DisplayName("every subtask sees exactly the configured GPUs, made by the plugin's class loader")
        void subtasksSeeGpus(LocalDeviceCluster cluster) throws Exception {
            Map<Integer, SubtaskResources> seen = ResourceProbe.run(cluster.createEnvironment(), "gpu", 2);

            assertThat(seen).containsOnlyKeys(0, 1);
            assertThat(seen.values())
                    .allSatisfy(
                            o -> {
                                assertThat(o.count()).isEqualTo(2);
                                assertThat(uuids(o)).isEqualTo("SIM-GPU-0,SIM-GPU-1");
                                assertThat(o.createdByAnotherClassLoader()).isTrue();
                            });
        }

        @Test
        @DisplayName("a resource no driver provides is empty, as in Flink")
        void unknownResource(LocalDeviceCluster cluster) throws Exception {
            Map<Integer, SubtaskResources> seen = ResourceProbe.run(cluster.createEnvironment(), "fpga", 2);
            assertThat(seen.values()).extracting(o -> o.count()).containsOnly(0);
        }
    }

    @Nested
    @DisplayName("registered on an instance field")
    class PerTest {

        @RegisterExtension
        final LocalDeviceClusterExtension extension =
                LocalDeviceClusterExtension.of(LocalDeviceCluster.builder());

        @Test
        @DisplayName("the extension starts a cluster for the test and hands it in")
        void freshCluster(LocalDeviceCluster cluster) {
            assertThat(cluster).isSameAs(extension.cluster());
            assertThat(cluster.runningTaskManagers()).isEqualTo(1);
            assertThat(cluster.restPort()).isPositive();
        }
    }

    @Test
    @DisplayName("a failing driver leaves the job running with no GPUs, as Flink drops the resource")
    void failingDriver() throws Exception {
        try (LocalDeviceCluster cluster =
                LocalDeviceCluster.builder()
                        .simulatedGpus("gpu", 1, Map.of("fail-with", "simulated broken host"))
                        .slotsPerTaskManager(2)
                        .build()
                        .start()) {
            Map<Integer, SubtaskResources> seen = ResourceProbe.run(cluster.createEnvironment(), "gpu", 2);

            assertThat(seen).containsOnlyKeys(0, 1);
            assertThat(seen.values()).extracting(o -> o.count()).containsOnly(0);
        }
    }

    @Test
    @DisplayName("two TaskManagers each load the driver through their own plugin class loader")
    void twoTaskManagers() throws Exception {
        try (LocalDeviceCluster cluster =
                LocalDeviceCluster.builder()
                        .simulatedGpus("gpu", 3, Map.of())
                        .taskManagers(2)
                        .slotsPerTaskManager(1)
                        .build()
                        .start()) {
            assertThat(cluster.runningTaskManagers()).isEqualTo(2);

            Map<Integer, SubtaskResources> seen = ResourceProbe.run(cluster.createEnvironment(), "gpu", 2);

            assertThat(seen).containsOnlyKeys(0, 1);
            assertThat(seen.values())
                    .extracting(LocalDeviceClusterITCase::uuids)
                    .containsOnly("SIM-GPU-0,SIM-GPU-1,SIM-GPU-2");
            Set<String> loaders =
                    seen.values().stream().map(SubtaskResources::infoClassLoader).collect(Collectors.toSet());
            assertThat(loaders).as("one plugin class loader per TaskManager").hasSize(2);
        }
    }

    @Test
    @DisplayName("TaskManagers can be added and stopped while the cluster runs")
    void addAndStopTaskManagers(@TempDir Path plugins) throws Exception {
        try (LocalDeviceCluster cluster =
                LocalDeviceCluster.builder()
                        .pluginsDir(plugins)
                        .installPlugins(SimulatedDevices::installGpuPlugin)
                        .resource("gpu", SimulatedDevices.GPU_FACTORY_CLASS, 1, Map.of())
                        .build()
                        .start()) {
            assertThat(cluster.pluginsDir()).isEqualTo(plugins.toAbsolutePath());
            assertThat(plugins.resolve("simulated-gpu").resolve("simulated-gpu.jar")).exists();

            int second = cluster.startTaskManager();
            assertThat(second).isEqualTo(1);
            assertThat(cluster.runningTaskManagers()).isEqualTo(2);
            assertThat(ResourceProbe.run(cluster.createEnvironment(), "gpu", 2)).hasSize(2);

            cluster.stopTaskManager(0);
            assertThat(cluster.runningTaskManagers()).isEqualTo(1);
            Map<Integer, SubtaskResources> seen = ResourceProbe.run(cluster.createEnvironment(), "gpu", 1);
            assertThat(uuids(seen.get(0))).isEqualTo("SIM-GPU-0");
        }
    }

    @Test
    @DisplayName("close frees the ports, the threads and the working folder")
    void closeCleansUp() throws Exception {
        Set<String> before = liveThreads();
        LocalDeviceCluster cluster =
                LocalDeviceCluster.builder().simulatedGpus("gpu", 1, Map.of()).build().start();
        int restPort;
        int rpcPort;
        Path working;
        try {
            restPort = cluster.restPort();
            rpcPort = cluster.rpcPort();
            working = cluster.pluginsDir().getParent();
        } finally {
            // the close under test; it also runs when reading the ports fails
            cluster.close();
        }

        assertThat(working).doesNotExist();
        assertPortFree(restPort);
        assertPortFree(rpcPort);
        assertNoThreadsLeftBeyond(before);
    }

    @Test
    @DisplayName("a failed start stops what it started and says why")
    void failedStart() throws Exception {
        Set<String> before = liveThreads();
        LocalDeviceCluster cluster =
                LocalDeviceCluster.builder()
                        .set("taskmanager.memory.network.min", "64m")
                        .set("taskmanager.memory.network.max", "32m")
                        .build();

        try {
            assertThatThrownBy(cluster::start).hasStackTraceContaining("network");
            assertNoThreadsLeftBeyond(before);
            assertThatThrownBy(cluster::createEnvironment)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("not running");
        } finally {
            // a no-op after the failed start; stops the cluster should it have started after all
            cluster.close();
        }
    }

    private static void assertPortFree(int port) throws IOException {
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getByName("localhost"))) {
            assertThat(s.getLocalPort()).isEqualTo(port);
        }
    }

    private static Set<String> liveThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .map(t -> t.getName() + "#" + t.getId())
                .collect(Collectors.toCollection(TreeSet::new));
    }

    private static void assertNoThreadsLeftBeyond(Set<String> before) throws InterruptedException {
        Set<String> left = Set.of();
        for (int i = 0; i < 200; i++) {
            left = new TreeSet<>(liveThreads());
            left.removeAll(before);
            if (left.isEmpty()) {
                return;
            }
            Thread.sleep(100);
        }
        assertThat(left).as("threads the cluster left running").isEmpty();
    }
}
