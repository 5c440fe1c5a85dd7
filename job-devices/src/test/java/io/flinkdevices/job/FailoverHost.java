package io.flinkdevices.job;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.core.execution.JobClient;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The fail-over tests' host: a fake RDMA adapter with two ACTIVE ports, the RDMA plugin jar (built
 * by driver-rdma, named by a system property the build sets) with a 200 ms monitor, {@code
 * fail-tasks} and coordination on, and a one-slot TaskManager that restarts failed tasks.
 */
final class FailoverHost implements AutoCloseable {

    final FakeFileTree sys;
    final Path coordinationFile;
    private final Path plugins;
    private final Map<String, String> params = new HashMap<>();

    FailoverHost(Path temp) throws IOException {
        sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true, true).installOn(FakeHost.create(temp.resolve("host")));
        coordinationFile = temp.resolve("rdma.coordination");
        plugins = temp.resolve("plugins");
        Path jar = Path.of(System.getProperty("rdma.plugin.jar"));
        Files.copy(jar, Files.createDirectories(plugins.resolve("rdma")).resolve(jar.getFileName()));
        params.put("sysfs.root", sys.root().toString());
        params.put("monitor.interval", "200 ms");
        params.put("health.action", "fail-tasks");
        params.put("coordination.enabled", "true");
        params.put("coordination.file", coordinationFile.toString());
    }

    /** The cluster: both ports to one TaskManager with one slot, up to 3 restarts 200 ms apart. */
    LocalDeviceCluster.Builder cluster() {
        return LocalDeviceCluster.builder()
                .pluginsDir(plugins)
                .resource("rdma", "io.flinkdevices.rdma.RdmaDriverFactory", 2, params)
                .taskManagers(1)
                .slotsPerTaskManager(1)
                .set("restart-strategy.type", "fixed-delay")
                .set("restart-strategy.fixed-delay.attempts", "3")
                .set("restart-strategy.fixed-delay.delay", "200 ms");
    }

    /** Takes port {@code n} of the adapter DOWN. */
    void portDown(int n) throws IOException {
        FakeRdmaHost.portDown(sys, "mlx5_0", n);
    }

    /**
     * Releases the ports this JVM's TaskManager held (it holds them until the JVM exits), then waits
     * until the RDMA monitor has ended on its own once the stopped TaskManager's infos are collected
     * (until then it would see the fake host's files vanish with the temporary folder).
     */
    @Override
    public void close() throws Exception {
        DeviceCoordinator.create(CoordinationParams.of(coordinationFile)).releaseAll();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.isAlive() && t.getName().equals("flink-devices-monitor-rdma"))) {
            assertThat(System.nanoTime()).as("the RDMA monitor ends after its TaskManager stopped").isLessThan(deadline);
            System.gc();
            Thread.sleep(200);
        }
    }

    /** Waits until {@code condition} holds, at most 90 s, else fails naming {@code what} and {@code seen}. */
    static void await(String what, Supplier<Boolean> condition, Object seen) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!condition.get()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what + "; seen: " + seen);
            }
            Thread.sleep(50);
        }
    }

    /** The job's status, or null while it cannot be read. */
    static JobStatus status(JobClient job) {
        try {
            return job.getJobStatus().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            return null;
        }
    }
}
