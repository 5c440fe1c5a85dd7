package io.flinkdevices.job.batch.example;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.testkit.cluster.LocalDeviceCluster;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

/** The guide's complete batching example runs on a local device cluster and squares every record. */
class SquareJobITCase {

    @Test
    @DisplayName("two subtasks, each on its leased simulated GPU, square 1000 floats: all results right, in order per subtask")
    void squares() throws Exception {
        try (LocalDeviceCluster cluster = LocalDeviceCluster.builder()
                .simulatedGpus("gpu", 2, Map.of("count", "2"))
                .slotsPerTaskManager(2)
                .build()
                .start()) {
            StreamExecutionEnvironment env = cluster.createEnvironment();
            env.setParallelism(2);
            List<Float> out = SquareJob.squares(env, 1000).executeAndCollect(1001);
            assertThat(out).hasSize(1000);
            assertThat(out.stream().mapToDouble(Float::doubleValue).sum())
                    .as("the sum of the squares of 0..999")
                    .isEqualTo(332_833_500.0);
        }
    }
}
