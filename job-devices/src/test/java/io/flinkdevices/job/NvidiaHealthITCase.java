package io.flinkdevices.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.InstalledNvidiaHost;

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
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A job on the local device cluster with the NVIDIA plugin jar on a fake host of two H100s (read
 * through nvidia-smi) and Flink's own Prometheus reporter: the NVIDIA per-GPU gauges (names as
 * DCGM's fields) appear on the reporter's endpoint and follow the GPU, a GPU falling off the bus
 * mid-job flips {@code health} to failed (and back once it is listed again), and with {@code
 * fail-tasks} the task fails naming the GPU and the reason.
 */
@DisplayName("NVIDIA GPUs at run time on a local device cluster, scraped through Flink's Prometheus reporter")
class NvidiaHealthITCase {

    private static final String FACTORY = "io.flinkdevices.nvidia.NvidiaGpuDriverFactory";
    private static final String RESOURCE = "gpu";
    /** GPU 0's UUID as Flink's Prometheus reporter writes a label value ('-' as '_'). */
    private static final String DEVICE = FakeNvidiaHost.gpuUuid(0).replaceAll("[^a-zA-Z0-9:_]", "_");

    @TempDir Path temp;

    /** Registers the gauges and the guard in open(), checks the guard per record. */
    static final class Watch extends RichMapFunction<Long, Long> {
        private transient DeviceHealthGuard guard;

        @Override
        public void open(OpenContext openContext) {
            DeviceMetrics.register(getRuntimeContext(), RESOURCE);
            guard = DeviceHealthGuard.of(getRuntimeContext(), RESOURCE);
        }

        @Override
        public Long map(Long value) throws Exception {
            guard.check(); // throws DeviceFailedException once the task's GPU is failed
            Thread.sleep(2);
            return value;
        }
    }

    /**
     * Two H100s, of which the task gets GPU 0: with GPU 1 still listed, GPU 0 missing from
     * nvidia-smi's answer is that GPU lost (with no GPU left, nvidia-smi says "No devices were
     * found", which fails the GPU as well).
     */
    private InstalledNvidiaHost host() {
        return FakeNvidiaHost.builder().gpus(FakeNvidiaHost.Model.H100_SXM_80GB, 2).install(FakeHost.create(temp.resolve("host")));
    }

    private LocalDeviceCluster cluster(InstalledNvidiaHost gpus, String action, PrometheusScrape prom) throws Exception {
        Map<String, String> params = Map.of(
                "backend", "nvidia-smi",
                "nvidia-smi.path", gpus.smi().path().toString(),
                "timeout", "10 s",
                "monitor.interval", "200 ms",
                "health.action", action);
        return ScrapedCluster.start(temp, "nvidia.plugin.jar", RESOURCE, FACTORY, params, prom);
    }

    private static JobClient submit(LocalDeviceCluster cluster) throws Exception {
        StreamExecutionEnvironment env = cluster.createEnvironment();
        env.setParallelism(1);
        env.fromSequence(0, Long.MAX_VALUE).map(new Watch()).name("watch").sinkTo(new DiscardingSink<>());
        return env.executeAsync("GPUs at run time");
    }

    @Test
    @DisplayName("report: per-GPU gauges on the Prometheus endpoint follow the GPU; a GPU off the bus flips health to 2 and back, the job keeps running")
    void reportShowsGaugesAndHealth() throws Exception {
        InstalledNvidiaHost gpus = host();
        PrometheusScrape prom = PrometheusScrape.onFreePorts();
        try (LocalDeviceCluster cluster = cluster(gpus, "report", prom)) {
            JobClient job = submit(cluster);
            try {
                prom.await(RESOURCE, DEVICE, "health", 0);
                String first = prom.awaitAll(RESOURCE, DEVICE, "gpu_util", "mem_copy_util", "fb_used", "fb_total", "gpu_temp",
                        "power_usage", "ecc_sbe_vol_total", "ecc_dbe_vol_total");
                assertThat(PrometheusScrape.gauge(first, RESOURCE, DEVICE, "fb_total"))
                        .isEqualTo((double) FakeNvidiaHost.Model.H100_SXM_80GB.memoryMib());
                assertThat(PrometheusScrape.gauge(first, RESOURCE, DEVICE, "gpu_temp")).isEqualTo(34.0);

                gpus.load(0, 87, 40_000);
                prom.await(RESOURCE, DEVICE, "gpu_util", 87);
                prom.await(RESOURCE, DEVICE, "fb_used", 40_000);

                gpus.removeGpu(0);
                prom.await(RESOURCE, DEVICE, "health", 2);
                assertThat(job.getJobStatus().get(10, TimeUnit.SECONDS)).isEqualTo(JobStatus.RUNNING);

                gpus.restoreGpu(0);
                prom.await(RESOURCE, DEVICE, "health", 0);
                assertThat(job.getJobStatus().get(10, TimeUnit.SECONDS)).isEqualTo(JobStatus.RUNNING);
            } finally {
                job.cancel().get(30, TimeUnit.SECONDS);
            }
        }
        assertMonitorGone(gpus);
    }

    @Test
    @DisplayName("fail-tasks: a GPU falling off the bus mid-job fails the task with the GPU and the reason in the exception")
    void failTasksFailsTheTask() throws Exception {
        InstalledNvidiaHost gpus = host();
        PrometheusScrape prom = PrometheusScrape.onFreePorts();
        try (LocalDeviceCluster cluster = cluster(gpus, "fail-tasks", prom)) {
            JobClient job = submit(cluster);
            prom.await(RESOURCE, DEVICE, "health", 0);
            assertThat(job.getJobStatus().get(10, TimeUnit.SECONDS)).isEqualTo(JobStatus.RUNNING);

            gpus.removeGpu(0);
            String uuid = FakeNvidiaHost.gpuUuid(0);
            assertThatThrownBy(() -> job.getJobExecutionResult().get(120, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .satisfies(e -> assertThat(ExceptionUtils.stringifyException(e))
                            .contains("DeviceFailedException")
                            .contains("Device " + uuid + " of external resource 'gpu' failed: GPU " + uuid
                                    + " is no longer listed by nvidia-smi (fallen off the bus or removed)"));
        }
        assertMonitorGone(gpus);
    }

    /**
     * Once the cluster closed, its TaskManager's monitor is gone, as with a TaskManager process
     * that ended: no monitor thread is left and nvidia-smi is not run any more (five intervals).
     */
    private static void assertMonitorGone(InstalledNvidiaHost gpus) throws InterruptedException {
        assertThat(Thread.getAllStackTraces().keySet())
                .as("threads once the cluster closed")
                .noneMatch(t -> t.getName().startsWith("flink-devices-monitor-"));
        int calls = gpus.smi().invocationCount();
        Thread.sleep(1_000);
        assertThat(gpus.smi().invocationCount()).as("nvidia-smi runs after the cluster closed").isEqualTo(calls);
    }
}
