package io.flinkdevices.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.InstalledNvidiaHost;
import io.flinkdevices.testkit.fake.NvmlStandIn;

import org.apache.flink.api.common.JobStatus;
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
 * A job on the local device cluster whose NVIDIA plugin samples through NVML (the testkit's
 * stand-in {@code libnvidia-ml.so.1}, loaded by the plugin's own JNA in its plugin class loader)
 * with {@code fail-tasks}: an application Xid on the task's GPU leaves the job running, a critical
 * Xid fails the task with the Xid in the exception, as the NVIDIA device plugin counts them.
 */
@DisplayName("Xid events through NVML on a job of the local device cluster")
class NvmlXidITCase {

    private static final String FACTORY = "io.flinkdevices.nvidia.NvidiaGpuDriverFactory";
    private static final String RESOURCE = "gpu";
    /** GPU 0's UUID as Flink's Prometheus reporter writes a label value ('-' as '_'). */
    private static final String DEVICE = FakeNvidiaHost.gpuUuid(0).replaceAll("[^a-zA-Z0-9:_]", "_");

    @TempDir Path temp;

    @Test
    @DisplayName("fail-tasks: Xid 13 (the job's own fault) keeps the task running, Xid 79 fails it naming the GPU and the Xid")
    void criticalXidFailsTheTaskApplicationXidDoesNot() throws Exception {
        InstalledNvidiaHost gpus = FakeNvidiaHost.builder().gpus(FakeNvidiaHost.Model.H100_SXM_80GB, 2)
                .install(FakeHost.create(temp.resolve("host")));
        Path nvml = NvmlStandIn.installOn(gpus);
        PrometheusScrape prom = PrometheusScrape.onFreePorts();
        try (LocalDeviceCluster cluster = cluster(nvml, prom)) {
            StreamExecutionEnvironment env = cluster.createEnvironment();
            env.setParallelism(1);
            env.fromSequence(0, Long.MAX_VALUE).map(new NvidiaHealthITCase.Watch()).name("watch").sinkTo(new DiscardingSink<>());
            JobClient job = env.executeAsync("Xids through NVML");
            prom.await(RESOURCE, DEVICE, "health", 0);

            gpus.xid(0, 13);
            String seen = prom.await(RESOURCE, DEVICE, "xid_errors", 13);
            assertThat(PrometheusScrape.gauge(seen, RESOURCE, DEVICE, "health"))
                    .as("health (0 ok, 2 failed) in the scrape that shows Xid 13: an application Xid is the job's fault")
                    .isEqualTo(0.0);
            assertThat(job.getJobStatus().get(10, TimeUnit.SECONDS)).isEqualTo(JobStatus.RUNNING);

            gpus.xid(0, 79);
            String uuid = FakeNvidiaHost.gpuUuid(0);
            assertThatThrownBy(() -> job.getJobExecutionResult().get(120, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .satisfies(e -> assertThat(ExceptionUtils.stringifyException(e))
                            .contains("DeviceFailedException")
                            .contains("Device " + uuid + " of external resource 'gpu' failed: Xid 79 (GPU has fallen off the bus) at "));
        }
    }

    private LocalDeviceCluster cluster(Path nvml, PrometheusScrape prom) throws Exception {
        Map<String, String> params = Map.of(
                "backend", "nvml",
                "nvml.library", nvml.toString(),
                "monitor.interval", "200 ms",
                "health.action", "fail-tasks");
        return ScrapedCluster.start(temp, "nvidia.plugin.jar", RESOURCE, FACTORY, params, prom);
    }
}
