package io.flinkdevices.job;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.info.RdmaInfo;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;

import org.apache.flink.api.common.JobStatus;
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
 * A leased RDMA port taken DOWN mid-job on the local device cluster (RDMA plugin jar, monitoring,
 * coordination, {@code fail-tasks}, Flink's Prometheus reporter): the lease's gauges show the port
 * without any job code for metrics, the guard fails the task, and the restarted attempt leases the
 * working port, never the failed one.
 */
@DisplayName("A leased device that fails mid-job: the restart leases a working one; the lease's gauges show it")
class DeviceLeaseFailoverITCase {

    /** The port each attempt leased, in order. */
    static final List<String> LEASED = new CopyOnWriteArrayList<>();

    @TempDir Path temp;

    /** Leases a port in open(), checks its guard per record: no DeviceMetrics call anywhere. */
    static final class LeaseAndGuard extends RichMapFunction<Long, Long> {
        private static final long serialVersionUID = 1L;
        private transient DeviceLease lease;
        private transient DeviceHealthGuard guard;

        @Override
        public void open(OpenContext openContext) {
            lease = DeviceLeases.acquire(getRuntimeContext(), "rdma");
            RdmaInfo port = lease.first(RdmaInfo::from);
            LEASED.add(port.getDevice() + "/" + port.getPort());
            guard = lease.guard();
        }

        @Override
        public Long map(Long value) throws Exception {
            guard.check();
            Thread.sleep(2);
            return value;
        }

        @Override
        public void close() {
            if (lease != null) {
                lease.close();
            }
        }
    }

    @Test
    @DisplayName("mlx5_0/1 goes DOWN: the task fails over and the restarted attempt leases mlx5_0/2; gauges of the leased port appear")
    void restartLeasesTheWorkingPort() throws Exception {
        LEASED.clear();
        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true, true).installOn(FakeHost.create(temp.resolve("host")));
        Path file = temp.resolve("rdma.coordination");
        Path plugins = temp.resolve("plugins");
        Path jar = Path.of(System.getProperty("rdma.plugin.jar"));
        Files.copy(jar, Files.createDirectories(plugins.resolve("rdma")).resolve(jar.getFileName()));
        Map<String, String> params = new HashMap<>();
        params.put("sysfs.root", sys.root().toString());
        params.put("monitor.interval", "200 ms");
        params.put("health.action", "fail-tasks");
        params.put("coordination.enabled", "true");
        params.put("coordination.file", file.toString());
        PrometheusScrape prom = PrometheusScrape.onFreePorts();
        try (LocalDeviceCluster cluster = LocalDeviceCluster.builder()
                .pluginsDir(plugins)
                .resource("rdma", "io.flinkdevices.rdma.RdmaDriverFactory", 2, params)
                .taskManagers(1)
                .slotsPerTaskManager(1)
                .set("metrics.reporter.prom.factory.class", "org.apache.flink.metrics.prometheus.PrometheusReporterFactory")
                .set("metrics.reporter.prom.port", prom.portRange())
                .set("restart-strategy.type", "fixed-delay")
                .set("restart-strategy.fixed-delay.attempts", "3")
                .set("restart-strategy.fixed-delay.delay", "200 ms")
                .build()
                .start()) {
            StreamExecutionEnvironment env = cluster.createEnvironment();
            env.setParallelism(1);
            env.fromSequence(0, Long.MAX_VALUE).map(new LeaseAndGuard()).name("lease").sinkTo(new DiscardingSink<>());
            JobClient job = env.executeAsync("leased port fails mid-job");
            try {
                await("the task leased a port", () -> !LEASED.isEmpty());
                assertThat(LEASED).containsExactly("mlx5_0/1");
                String scraped = prom.awaitAll("rdma", "mlx5_0_1", "health", "monitor_samples", "port_rcv_data");
                assertThat(PrometheusScrape.gauge(scraped, "rdma", "mlx5_0_1", "health")).isEqualTo(0.0);
                assertThat(PrometheusScrape.gauge(scraped, "rdma", "mlx5_0_2", "health"))
                        .as("no gauge for the port no task leased").isNull();

                FakeRdmaHost.portDown(sys, "mlx5_0", 1);
                await("the restarted attempt leased a port", () -> LEASED.size() >= 2);
                await("running again", () -> status(job) == JobStatus.RUNNING);
                assertThat(LEASED).containsExactly("mlx5_0/1", "mlx5_0/2");
                prom.awaitAll("rdma", "mlx5_0_2", "health", "port_rcv_data");
            } finally {
                job.cancel().get(30, TimeUnit.SECONDS);
            }
        } finally {
            // the TaskManager ran in this JVM, which holds its ports until it exits: release them
            DeviceCoordinator.create(CoordinationParams.of(file)).releaseAll();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.isAlive() && t.getName().equals("flink-devices-monitor-rdma"))) {
            assertThat(System.nanoTime()).as("the RDMA monitor ends after its TaskManager stopped").isLessThan(deadline);
            System.gc();
            Thread.sleep(200);
        }
    }

    private static void await(String what, Supplier<Boolean> condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!condition.get()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what + "; leased: " + LEASED);
            }
            Thread.sleep(50);
        }
    }

    private static JobStatus status(JobClient job) {
        try {
            return job.getJobStatus().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            return null;
        }
    }
}
