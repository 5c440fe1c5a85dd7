package io.flinkdevices.dist;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.dist.StandaloneCluster.FlinkProcess;
import io.flinkdevices.sdk.coordination.DeviceQuarantine;
import io.flinkdevices.sdk.coordination.QuarantinedDevice;
import io.flinkdevices.sdk.health.DeviceMonitor;
import io.flinkdevices.sdk.process.ExternalCommand;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * The archive's RDMA plugin in a standalone cluster of separate processes with coordination on and
 * {@code health.action: stop-taskmanager}: a port taken DOWN makes the TaskManager holding it exit
 * (code 75) with its one log line naming the port and the reason; the port is quarantined in the
 * host's coordination file; a replacement TaskManager gets only the healthy port, even after the
 * failed one came back up; the archive's {@code bin/flink-devices discover} shows the quarantine
 * with the clear command, and that command (run as printed) brings the port back: the next
 * TaskManager is handed it.
 */
@DisplayName("A failed port in a standalone cluster of separate processes: the TaskManager exits, the port is quarantined until cleared")
class QuarantineEndToEndITCase {

    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    @TempDir Path temp;

    @Test
    @DisplayName("stop-taskmanager: exit with the log line, replacement gets the healthy port, discover shows it, clear brings it back")
    void failedPortLeavesServiceUntilCleared() throws Exception {
        Path root = Distribution.unpacked();
        Path plugins = root.resolve("plugins");
        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true, true).installOn(FakeHost.create(temp.resolve("host")));
        Path file = temp.resolve("rdma.coordination");

        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("taskmanager.numberOfTaskSlots", "1");
        settings.put("external-resources", "rdma");
        settings.put("external-resource.rdma.amount", "1");
        settings.put("external-resource.rdma.driver-factory.class", "io.flinkdevices.rdma.RdmaDriverFactory");
        settings.put("external-resource.rdma.param.sysfs.root", sys.root().toString());
        settings.put("external-resource.rdma.param.coordination.enabled", "true");
        settings.put("external-resource.rdma.param.coordination.file", file.toString());
        settings.put("external-resource.rdma.param.monitor.interval", "200 ms");
        settings.put("external-resource.rdma.param.health.action", "stop-taskmanager");

        try (StandaloneCluster cluster = new StandaloneCluster(temp.resolve("flink"), plugins, Distribution.flinkClassPath(), settings)) {
            cluster.startJobManager(START_TIMEOUT);
            FlinkProcess first = cluster.startTaskManager("taskmanager-1");
            awaitHeld(cluster, file, first, "mlx5_0/1");

            FakeRdmaHost.portDown(sys, "mlx5_0", 1);
            assertThat(first.process.waitFor(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS))
                    .as("the TaskManager holding the failed port exits\n%s", cluster.diagnostics()).isTrue();
            assertThat(first.process.exitValue()).isEqualTo(DeviceMonitor.STOP_EXIT_CODE);
            List<String> stopLines = Files.readAllLines(first.log, StandardCharsets.UTF_8).stream()
                    .filter(l -> l.contains("Stopping this TaskManager")).toList();
            assertThat(stopLines).singleElement().asString()
                    .contains("(exit code 75): device failed: mlx5_0/1: port mlx5_0/1 state DOWN");
            assertThat(DeviceQuarantine.peek(file)).singleElement().satisfies(q -> {
                assertThat(q.deviceId()).isEqualTo("mlx5_0/1");
                assertThat(q.reason()).contains("port mlx5_0/1 state DOWN");
                assertThat(q.seenBy()).isEqualTo("TaskManagerRunner pid " + first.pid() + " (rdma)");
            });

            // the port comes back, but nobody watched it for health.recover-after: it stays out
            FakeRdmaHost.portUp(sys, "mlx5_0", 1);
            FlinkProcess replacement = cluster.startTaskManager("taskmanager-2");
            awaitHeld(cluster, file, replacement, "mlx5_0/2");

            ExternalCommand.Result discover = tool(root, cluster, "discover", "--conf-dir", cluster.confDir().toString());
            String clear = "flink-devices quarantine clear --resource rdma --device mlx5_0/1";
            assertThat(discover.stdout())
                    .contains("device mlx5_0/1 is out of service (quarantined): port mlx5_0/1 state DOWN")
                    .contains("seen by TaskManagerRunner pid " + first.pid() + " (rdma)")
                    .contains("once repaired: " + clear);

            List<String> clearArgs = new ArrayList<>(List.of(clear.substring("flink-devices ".length()).split(" ")));
            clearArgs.addAll(List.of("--conf-dir", cluster.confDir().toString()));
            ExternalCommand.Result cleared = tool(root, cluster, clearArgs.toArray(String[]::new));
            assertThat(cleared.exitCode()).as(cleared.stderrTail()).isZero();
            assertThat(DeviceQuarantine.peek(file)).extracting(QuarantinedDevice::deviceId).isEmpty();

            FlinkProcess third = cluster.startTaskManager("taskmanager-3");
            awaitHeld(cluster, file, third, "mlx5_0/1");
            assertThat(replacement.process.isAlive()).isTrue();
        }
    }

    /** Waits until {@code tm} holds exactly {@code port} in the coordination file (its driver ran at start). */
    private static void awaitHeld(StandaloneCluster cluster, Path file, FlinkProcess tm, String port) throws Exception {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        Set<String> held = Set.of();
        while (System.nanoTime() < deadline) {
            held = heldBy(file, tm.pid());
            if (!held.isEmpty()) {
                break;
            }
            assertThat(tm.process.isAlive()).as("%s is running\n%s", tm, cluster.diagnostics()).isTrue();
            Thread.sleep(100);
        }
        assertThat(held).as("ports %s holds\n%s", tm, cluster.diagnostics()).containsExactly(port);
    }

    private static Set<String> heldBy(Path file, long pid) throws Exception {
        Set<String> out = new TreeSet<>();
        StandaloneClusterEndToEndITCase.holders(file).forEach((id, owner) -> {
            if (owner == pid) {
                out.add(id);
            }
        });
        return out;
    }

    private ExternalCommand.Result tool(Path root, StandaloneCluster cluster, String... args) throws Exception {
        List<String> argv = new ArrayList<>(List.of(args));
        if (argv.get(0).equals("discover")) {
            argv.addAll(List.of("--plugins-dir", root.resolve("plugins").toString()));
        }
        Map<String, String> env = Map.of("FLINK_HOME", root.toString(),
                "FLINK_DEVICES_JAVA_OPTS", "-Djava.io.tmpdir=" + Files.createDirectories(temp.resolve("cli-tmp")));
        return ExternalCommand.of(root.resolve("bin/flink-devices"), argv, Duration.ofSeconds(120), "bin/flink-devices")
                .withEnvironment(env)
                .run();
    }
}
