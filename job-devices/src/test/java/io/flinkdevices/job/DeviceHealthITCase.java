package io.flinkdevices.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.fake.FakeAmdHost;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.ExceptionUtils;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A job on the local device cluster with the RDMA (or AMD) plugin jar and Flink's own Prometheus
 * reporter: the per-device gauges appear on the reporter's HTTP endpoint, a port taken DOWN (a RAS
 * count jump) mid-job flips {@code health}, and with {@code fail-tasks} the task fails naming the
 * port and the reason.
 */
@DisplayName("Devices at run time on a local device cluster, scraped through Flink's Prometheus reporter")
class DeviceHealthITCase {

    private static final String FACTORY = "io.flinkdevices.rdma.RdmaDriverFactory";

    @TempDir Path temp;

    /** Registers the gauges and the guard in open(), checks the guard per record. */
    static final class Watch extends RichMapFunction<Long, Long> {
        private final String resource;
        private transient DeviceHealthGuard guard;

        Watch(String resource) {
            this.resource = resource;
        }

        @Override
        public void open(OpenContext openContext) {
            // a gauge per metric per device, under this operator's metric group
            DeviceMetrics.register(getRuntimeContext(), resource);
            guard = DeviceHealthGuard.of(getRuntimeContext(), resource);
        }

        @Override
        public Long map(Long value) throws Exception {
            guard.check(); // throws DeviceFailedException once a device of the task is failed
            Thread.sleep(2);
            return value;
        }
    }

    private LocalDeviceCluster cluster(FakeFileTree sys, String action, PrometheusScrape prom) throws Exception {
        Map<String, String> params = new HashMap<>();
        params.put("sysfs.root", sys.root().toString());
        return cluster("rdma", "rdma.plugin.jar", FACTORY, params, action, prom);
    }

    private LocalDeviceCluster cluster(String resource, String jarProperty, String factory, Map<String, String> driverParams,
            String action, PrometheusScrape prom) throws Exception {
        Map<String, String> params = new HashMap<>(driverParams);
        params.put("monitor.interval", "200 ms");
        params.put("health.action", action);
        return ScrapedCluster.start(temp, jarProperty, resource, factory, params, prom);
    }

    private static JobClient submit(LocalDeviceCluster cluster) throws Exception {
        return submit(cluster, "rdma");
    }

    private static JobClient submit(LocalDeviceCluster cluster, String resource) throws Exception {
        StreamExecutionEnvironment env = cluster.createEnvironment();
        env.setParallelism(1);
        env.fromSequence(0, Long.MAX_VALUE).map(new Watch(resource)).name("watch").sinkTo(new DiscardingSink<>());
        return env.executeAsync("devices at run time");
    }

    /**
     * The value of the device gauge {@code name} of port mlx5_0/1, or null while it is not
     * exported. Flink's Prometheus reporter writes the {@code /} of a label value as {@code _}.
     */
    private static Double gauge(String scraped, String name) {
        return gauge(scraped, "rdma", "mlx5_0_1", name);
    }

    private static Double gauge(String scraped, String resource, String device, String name) {
        return PrometheusScrape.gauge(scraped, resource, device, name);
    }

    private static String awaitGauge(PrometheusScrape base, String name, double expected) throws InterruptedException {
        return awaitGauge(base, "rdma", "mlx5_0_1", name, expected);
    }

    private static String awaitGauge(PrometheusScrape base, String resource, String device, String name, double expected)
            throws InterruptedException {
        return base.await(resource, device, name, expected);
    }

    @Test
    @DisplayName("report: per-device gauges on the Prometheus endpoint; counters move; a port DOWN flips health to 2 and back, the job keeps running")
    void reportShowsHealthAndCounters() throws Exception {
        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).installOn(FakeHost.create(temp.resolve("host")));
        PrometheusScrape base = PrometheusScrape.onFreePorts();
        try (LocalDeviceCluster cluster = cluster(sys, "report", base)) {
            JobClient job = submit(cluster);
            try {
                awaitGauge(base, "health", 0);
                String first = base.awaitAll("rdma", "mlx5_0_1", "port_rcv_data", "port_xmit_data", "symbol_error", "link_downed",
                        "port_state", "port_phys_state", "monitor_errors", "monitor_samples");
                assertThat(gauge(first, "port_state")).isEqualTo(4.0);

                FakeRdmaHost.addToCounter(sys, "mlx5_0", 1, "port_rcv_data", 4096);
                FakeRdmaHost.addToCounter(sys, "mlx5_0", 1, "symbol_error", 3);
                String moved = awaitGauge(base, "port_rcv_data", 4096);
                assertThat(gauge(moved, "symbol_error")).isIn(0.0, 3.0); // read in the same sample or the next
                awaitGauge(base, "symbol_error", 3);

                FakeRdmaHost.portDown(sys, "mlx5_0", 1);
                awaitGauge(base, "health", 2);
                // state and phys_state are two files, changed one after the other (as the kernel
                // does): a sample may see phys_state down first, so wait for state too
                awaitGauge(base, "port_state", 1);
                assertThat(job.getJobStatus().get(10, TimeUnit.SECONDS)).isEqualTo(JobStatus.RUNNING);

                FakeRdmaHost.portUp(sys, "mlx5_0", 1);
                awaitGauge(base, "health", 0);
                assertThat(job.getJobStatus().get(10, TimeUnit.SECONDS)).isEqualTo(JobStatus.RUNNING);
            } finally {
                job.cancel().get(30, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    @DisplayName("fail-tasks: a port taken DOWN mid-job fails the task with the port and the reason in the exception")
    void failTasksFailsTheTask() throws Exception {
        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).installOn(FakeHost.create(temp.resolve("host")));
        PrometheusScrape base = PrometheusScrape.onFreePorts();
        try (LocalDeviceCluster cluster = cluster(sys, "fail-tasks", base)) {
            JobClient job = submit(cluster);
            awaitGauge(base, "health", 0);
            assertThat(job.getJobStatus().get(10, TimeUnit.SECONDS)).isEqualTo(JobStatus.RUNNING);

            long t0 = System.nanoTime();
            FakeRdmaHost.portDown(sys, "mlx5_0", 1);
            assertThatThrownBy(() -> job.getJobExecutionResult().get(60, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .satisfies(e -> assertThat(ExceptionUtils.stringifyException(e))
                            .contains("DeviceFailedException")
                            .contains("Device mlx5_0/1 of external resource 'rdma' failed: port mlx5_0/1 state DOWN (phys_state Disabled)"));
            long detectMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertThat(detectMs).as("fault to failed job, with a 200 ms interval").isLessThan(10_000);
        }
    }

    @Test
    @DisplayName("AMD: per-GPU gauges (busy, VRAM, hwmon, RAS) on the Prometheus endpoint; an uncorrectable RAS jump flips health to 2")
    void amdGauges() throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(FakeAmdHost.Model.MI300X, 1).installOn(FakeHost.create(temp.resolve("host")));
        Map<String, String> params = new HashMap<>();
        params.put("sysfs.root", amd.sys().root().toString());
        params.put("dev.root", amd.dev().root().toString());
        params.put("backend", "sysfs");
        PrometheusScrape base = PrometheusScrape.onFreePorts();
        // Flink's Prometheus reporter keeps letters, digits, ':' and '_' of a label value and writes the rest as '_'
        String device = FakeAmdHost.pciAddress(0).replaceAll("[^a-zA-Z0-9:_]", "_");
        try (LocalDeviceCluster cluster = cluster("gpu", "amd.plugin.jar", "io.flinkdevices.amd.AmdGpuDriverFactory", params, "report", base)) {
            JobClient job = submit(cluster, "gpu");
            try {
                awaitGauge(base, "gpu", device, "health", 0);
                String first = base.awaitAll("gpu", device, "gpu_busy_percent", "mem_info_vram_used", "temperature_celsius",
                        "power_watts", "ras_umc_ue", "ras_umc_ce", "monitor_errors");
                assertThat(gauge(first, "gpu", device, "temperature_celsius")).isEqualTo(35.0);
                amd.busyPercent(0, 87);
                awaitGauge(base, "gpu", device, "gpu_busy_percent", 87);
                amd.rasErrors(0, "umc", 2, 0);
                awaitGauge(base, "gpu", device, "health", 2);
                awaitGauge(base, "gpu", device, "ras_umc_ue", 2);
                assertThat(job.getJobStatus().get(10, TimeUnit.SECONDS)).isEqualTo(JobStatus.RUNNING);
            } finally {
                job.cancel().get(30, TimeUnit.SECONDS);
            }
        }
    }
}
