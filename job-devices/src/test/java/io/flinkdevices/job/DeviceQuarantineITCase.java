package io.flinkdevices.job;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.coordination.DeviceQuarantine;
import io.flinkdevices.sdk.coordination.QuarantinedDevice;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;

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

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

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

    @Test
    @DisplayName("fail-tasks: the task fails over, mlx5_0/1 is quarantined, the restarted task picks mlx5_0/2")
    void restartedTaskAvoidsTheQuarantinedPort() throws Exception {
        PICKED.clear();
        try (FailoverHost host = new FailoverHost(temp);
                LocalDeviceCluster cluster = host.cluster().build().start()) {
            StreamExecutionEnvironment env = cluster.createEnvironment();
            env.setParallelism(1);
            env.fromSequence(0, Long.MAX_VALUE).map(new PickAndGuard()).name("pick").sinkTo(new DiscardingSink<>());
            JobClient job = env.executeAsync("quarantine mid-job");
            try {
                FailoverHost.await("the task picked a port", () -> !PICKED.isEmpty(), PICKED);
                assertThat(PICKED).containsExactly("mlx5_0/1");

                host.portDown(1);
                FailoverHost.await("the restarted task picked a port", () -> PICKED.size() >= 2, PICKED);
                assertThat(PICKED).containsExactly("mlx5_0/1", "mlx5_0/2");
                FailoverHost.await("running again", () -> FailoverHost.status(job) == JobStatus.RUNNING, PICKED);

                List<QuarantinedDevice> out = DeviceQuarantine.peek(host.coordinationFile);
                assertThat(out).singleElement().satisfies(q -> {
                    assertThat(q.deviceId()).isEqualTo("mlx5_0/1");
                    assertThat(q.reason()).contains("port mlx5_0/1 state DOWN");
                    assertThat(q.seenBy()).contains("pid " + ProcessHandle.current().pid()).contains("(rdma)");
                });
            } finally {
                job.cancel().get(30, TimeUnit.SECONDS);
            }
        }
    }
}
