package io.flinkdevices.job;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.coordination.DeviceQuarantine;
import io.flinkdevices.sdk.coordination.QuarantinedDevice;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A port taken DOWN mid-job on the local device cluster (RDMA plugin jar, coordination on, {@code
 * fail-tasks}): health flips, the guard fails the task over, the port is quarantined in the host's
 * coordination file, and the task Flink restarts picks the healthy port, not the quarantined one.
 */
@DisplayName("A failed device mid-job on a local device cluster is quarantined and the restarted task gets another")
class DeviceQuarantineITCase {

    /** The port each (re)started task picked in open(), in order. */
    static final List<String> PICKED = new CopyOnWriteArrayList<>();

    @TempDir Path temp;

    /** Picks the first healthy port in open(), guards it per record. */
    static final class PickAndGuard extends RichMapFunction<Long, Long> {
        private transient DeviceHealthGuard guard;

        @Override
        public void open(OpenContext openContext) {
            List<ExternalResourceInfo> ports = DeviceHealthGuard.healthy(getRuntimeContext(), "rdma");
            ExternalResourceInfo mine = ports.get(0);
            PICKED.add(mine.getProperty("health.device").orElse("?"));
            guard = DeviceHealthGuard.of("rdma", List.of(mine));
        }

        @Override
        public Long map(Long value) throws Exception {
            guard.check();
            Thread.sleep(2);
            return value;
        }
    }

    private static void await(String what, Supplier<Boolean> condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!condition.get()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(50);
        }
    }

    @Test
    @DisplayName("fail-tasks: the task fails over, mlx5_0/1 is quarantined, the restarted task picks mlx5_0/2")
    void restartedTaskAvoidsTheQuarantinedPort() throws Exception {
        PICKED.clear();
        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true, true).installOn(FakeHost.create(temp.resolve("host")));
        Path file = temp.resolve("rdma.coordination");
        Path plugins = temp.resolve("plugins");
        Path folder = Files.createDirectories(plugins.resolve("rdma"));
        Path jar = Path.of(System.getProperty("rdma.plugin.jar"));
        Files.copy(jar, folder.resolve(jar.getFileName()));
        Map<String, String> params = new HashMap<>();
        params.put("sysfs.root", sys.root().toString());
        params.put("monitor.interval", "200 ms");
        params.put("health.action", "fail-tasks");
        params.put("coordination.enabled", "true");
        params.put("coordination.file", file.toString());
        try (LocalDeviceCluster cluster = LocalDeviceCluster.builder()
                .pluginsDir(plugins)
                .resource("rdma", "io.flinkdevices.rdma.RdmaDriverFactory", 2, params)
                .taskManagers(1)
                .slotsPerTaskManager(1)
                .set("restart-strategy.type", "fixed-delay")
                .set("restart-strategy.fixed-delay.attempts", "3")
                .set("restart-strategy.fixed-delay.delay", "200 ms")
                .build()
                .start()) {
            StreamExecutionEnvironment env = cluster.createEnvironment();
            env.setParallelism(1);
            env.fromSequence(0, Long.MAX_VALUE).map(new PickAndGuard()).name("pick").sinkTo(new DiscardingSink<>());
            JobClient job = env.executeAsync("quarantine mid-job");
            try {
                await("the task picked a port", () -> !PICKED.isEmpty());
                assertThat(PICKED).containsExactly("mlx5_0/1");

                FakeRdmaHost.portDown(sys, "mlx5_0", 1);
                await("the restarted task picked a port", () -> PICKED.size() >= 2);
                assertThat(PICKED).containsExactly("mlx5_0/1", "mlx5_0/2");
                await("running again", () -> status(job) == JobStatus.RUNNING);

                List<QuarantinedDevice> out = DeviceQuarantine.peek(file);
                assertThat(out).singleElement().satisfies(q -> {
                    assertThat(q.deviceId()).isEqualTo("mlx5_0/1");
                    assertThat(q.reason()).contains("port mlx5_0/1 state DOWN");
                    assertThat(q.seenBy()).contains("pid " + ProcessHandle.current().pid()).contains("(rdma)");
                });
            } finally {
                job.cancel().get(30, TimeUnit.SECONDS);
            }
        } finally {
            // the TaskManager ran in this JVM, which holds its ports until it exits: release them
            DeviceCoordinator.create(CoordinationParams.of(file)).releaseAll();
        }
        // the monitor ends on its own once the stopped TaskManager's infos are collected; until
        // then it would see the fake host's files vanish with the temporary folder
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (monitorRunning()) {
            assertThat(System.nanoTime()).as("the RDMA monitor ends after its TaskManager stopped").isLessThan(deadline);
            System.gc();
            Thread.sleep(200);
        }
    }

    private static boolean monitorRunning() {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.isAlive() && t.getName().equals("flink-devices-monitor-rdma"));
    }

    private static JobStatus status(JobClient job) {
        try {
            return job.getJobStatus().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            return null;
        }
    }
}
