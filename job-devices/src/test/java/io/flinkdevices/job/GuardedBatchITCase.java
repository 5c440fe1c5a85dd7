package io.flinkdevices.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.job.batch.BatchCodec;
import io.flinkdevices.job.batch.BatchSettings;
import io.flinkdevices.job.batch.DeviceBatchOperator;
import io.flinkdevices.job.batch.NoComputeBackend;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.ExceptionUtils;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link DeviceBatchOperator#guardedBy(String)} on the local device cluster with the RDMA plugin
 * jar ({@code fail-tasks}, the monitor at 200 ms): a port that goes DOWN mid-job fails the task
 * through the operator's per-batch check, with no check of the job author's.
 */
@DisplayName("DeviceBatchOperator.guardedBy: the per-batch health check fails the task of a failed device")
class GuardedBatchITCase {

    /** Results the operator emitted; read by the test (the cluster runs in this JVM). */
    static final AtomicLong EMITTED = new AtomicLong();

    @TempDir Path temp;

    /** A long in, the long the no-compute backend copied back out. */
    static final class LongCodec implements BatchCodec<Long, Long> {
        private static final long serialVersionUID = 1L;

        @Override
        public void encode(Long record, ByteBuffer input, int offset) {
            input.putLong(offset, record);
        }

        @Override
        public Long decode(Long record, ByteBuffer output, int offset) {
            EMITTED.incrementAndGet();
            return output.getLong(offset);
        }
    }

    @Test
    @DisplayName("fail-tasks: a port taken DOWN mid-job fails the batching task with the port and the reason")
    void aFailedPortFailsTheBatchingTask() throws Exception {
        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).installOn(FakeHost.create(temp.resolve("host")));
        String p = System.getProperty("rdma.plugin.jar");
        assertThat(p).as("system property rdma.plugin.jar (set by the build)").isNotNull();
        Path jar = Path.of(p);
        Path folder = Files.createDirectories(temp.resolve("plugins/rdma"));
        Files.copy(jar, folder.resolve(jar.getFileName()));
        Map<String, String> params = Map.of("sysfs.root", sys.root().toString(), "monitor.interval", "200 ms",
                "health.action", "fail-tasks");
        try (LocalDeviceCluster cluster = LocalDeviceCluster.builder()
                .pluginsDir(temp.resolve("plugins"))
                .resource("rdma", "io.flinkdevices.rdma.RdmaDriverFactory", 1, params)
                .taskManagers(1)
                .slotsPerTaskManager(1)
                .set("restart-strategy.type", "none")
                .build()
                .start()) {
            StreamExecutionEnvironment env = cluster.createEnvironment();
            env.setParallelism(1);
            env.fromSequence(0, Long.MAX_VALUE)
                    .transform("batched", Types.LONG,
                            new DeviceBatchOperator<>(BatchSettings.of(64, 2), NoComputeBackend.factory(NoComputeBackend.Mode.COPY, 8),
                                    new LongCodec()).guardedBy("rdma"))
                    .sinkTo(new DiscardingSink<>());
            JobClient job = env.executeAsync("guarded batches");
            awaitEmitted(10_000);
            assertThat(job.getJobStatus().get(10, TimeUnit.SECONDS)).isEqualTo(JobStatus.RUNNING);

            FakeRdmaHost.portDown(sys, "mlx5_0", 1);
            assertThatThrownBy(() -> job.getJobExecutionResult().get(120, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .satisfies(e -> assertThat(ExceptionUtils.stringifyException(e))
                            .contains("DeviceFailedException")
                            .contains("Device mlx5_0/1 of external resource 'rdma' failed: port mlx5_0/1 state DOWN"));
        }
    }

    /** Waits (120 s at most, for a loaded machine) until the operator emitted {@code n} more results. */
    private static void awaitEmitted(long n) throws InterruptedException {
        long start = EMITTED.get();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (EMITTED.get() - start < n) {
            assertThat(System.nanoTime()).as("the job emitted fewer than %d results in 120 s", n).isLessThan(deadline);
            Thread.sleep(50);
        }
    }
}
