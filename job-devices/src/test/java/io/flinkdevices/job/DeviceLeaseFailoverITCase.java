package io.flinkdevices.job;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.info.RdmaInfo;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

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
        PrometheusScrape prom = PrometheusScrape.onFreePorts();
        try (FailoverHost host = new FailoverHost(temp);
                LocalDeviceCluster cluster = host.cluster()
                        .set("metrics.reporter.prom.factory.class", "org.apache.flink.metrics.prometheus.PrometheusReporterFactory")
                        .set("metrics.reporter.prom.port", prom.portRange())
                        .build()
                        .start()) {
            StreamExecutionEnvironment env = cluster.createEnvironment();
            env.setParallelism(1);
            env.fromSequence(0, Long.MAX_VALUE).map(new LeaseAndGuard()).name("lease").sinkTo(new DiscardingSink<>());
            JobClient job = env.executeAsync("leased port fails mid-job");
            try {
                FailoverHost.await("the task leased a port", () -> !LEASED.isEmpty(), LEASED);
                assertThat(LEASED).containsExactly("mlx5_0/1");
                String scraped = prom.awaitAll("rdma", "mlx5_0_1", "health", "monitor_samples", "port_rcv_data");
                assertThat(PrometheusScrape.gauge(scraped, "rdma", "mlx5_0_1", "health")).isEqualTo(0.0);
                assertThat(PrometheusScrape.gauge(scraped, "rdma", "mlx5_0_2", "health"))
                        .as("no gauge for the port no task leased").isNull();

                host.portDown(1);
                FailoverHost.await("the restarted attempt leased a port", () -> LEASED.size() >= 2, LEASED);
                FailoverHost.await("running again", () -> FailoverHost.status(job) == JobStatus.RUNNING, LEASED);
                assertThat(LEASED).containsExactly("mlx5_0/1", "mlx5_0/2");
                prom.awaitAll("rdma", "mlx5_0_2", "health", "port_rcv_data");
            } finally {
                job.cancel().get(30, TimeUnit.SECONDS);
            }
        }
    }
}
