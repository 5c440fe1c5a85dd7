package io.flinkdevices.samples.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.testkit.cluster.LocalDeviceCluster;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

class MatrixVectorJobITCase {

    @Test
    @DisplayName("on simulated GPUs every subtask takes the CPU path and every product equals the naive reference")
    void productsAreCorrectEndToEnd() throws Exception {
        int dims = 24;
        long records = 1003; // not a multiple of the batch: the last batch is flushed at end of input
        try (LocalDeviceCluster cluster =
                LocalDeviceCluster.builder()
                        .simulatedGpus(MatrixVectorJob.RESOURCE, 2, Map.of("count", "4"))
                        .taskManagers(1)
                        .slotsPerTaskManager(2)
                        .build()
                        .start()) {
            StreamExecutionEnvironment env = cluster.createEnvironment();
            env.setParallelism(2);
            List<IdVector> products =
                    MatrixVectorJob.products(env, records, dims, 50).executeAndCollect((int) records + 1);

            assertThat(products).hasSize((int) records);
            Set<Long> ids = products.stream().map(p -> p.id).collect(Collectors.toSet());
            assertThat(ids).hasSize((int) records).allMatch(id -> id >= 0 && id < records);
            Matrix m = Matrix.generate(dims, dims, MatrixVectorJob.MATRIX_SEED);
            for (IdVector p : products) {
                float[] x = IdVector.generate(p.id, dims, MatrixVectorJob.VECTOR_SEED).values;
                assertThat(p.values).as("product of record %d", p.id).containsExactly(m.multiplyNaive(x));
            }
        }
    }

    @Test
    @DisplayName("the main job reports the path each subtask used, its throughput, and no wrong product")
    void mainJobReportsPathAndThroughput() throws Exception {
        MatrixVectorJob.Result r = MatrixVectorLocal.run(64, 5000, 32, 2);

        assertThat(r.subtasksCpu).isEqualTo(2);
        assertThat(r.subtasksGpu).isZero();
        assertThat(r.recordsCpu).isEqualTo(5000);
        assertThat(r.nanosCpu).isPositive();
        assertThat(r.checked).isEqualTo((5000 + MatrixVectorJob.CHECK_EVERY - 1) / MatrixVectorJob.CHECK_EVERY);
        assertThat(r.mismatches).isZero();
        assertThat(r.summary())
                .contains("5000 records of 32 floats x 32x32 matrix, batch 64")
                .contains("CPU path: 2 subtask(s), 5000 records")
                .doesNotContain("GPU path")
                .contains(": 0 wrong");
    }

    @Test
    @DisplayName("--per-gpu 2: four subtasks lease half of each of two GPUs, and a matrix over half a GPU's memory is refused before any allocation")
    void sharesKeepInsideTheirMemoryBudget() throws Exception {
        // two simulated GPUs of 1 MiB: a 0.5 share may allocate 512 KiB
        Map<String, String> gpus = Map.of("count", "2", "memory-bytes", Long.toString(1L << 20));
        try (LocalDeviceCluster cluster = LocalDeviceCluster.builder()
                .simulatedGpus(MatrixVectorJob.RESOURCE, 2, gpus)
                .taskManagers(1)
                .slotsPerTaskManager(4)
                .set("restart-strategy.type", "none")
                .build()
                .start()) {
            MatrixVectorJobArgs fits = MatrixVectorJobArgs.parse(new String[] {
                "--gpus", "2", "--per-gpu", "2", "--dims", "24", "--records", "400", "--batch", "16"});
            StreamExecutionEnvironment env = cluster.createEnvironment();
            env.setParallelism(fits.jobParallelism());
            assertThat(MatrixVectorJob.products(env, fits).executeAndCollect(401)).hasSize(400);

            // a 512x512 matrix alone is 1 MiB of floats
            MatrixVectorJobArgs tooBig = MatrixVectorJobArgs.parse(new String[] {
                "--gpus", "2", "--per-gpu", "2", "--dims", "512", "--records", "40", "--batch", "16"});
            StreamExecutionEnvironment env2 = cluster.createEnvironment();
            env2.setParallelism(tooBig.jobParallelism());
            Throwable failed = org.junit.jupiter.api.Assertions.assertThrows(Exception.class,
                    () -> MatrixVectorJob.products(env2, tooBig).executeAndCollect(41));
            assertThat(org.apache.flink.util.ExceptionUtils.stringifyException(failed))
                    .contains("MatrixVectorJob: a 512x512 matrix and 2 batches of 16 vectors need ")
                    .contains(" bytes of GPU memory, more than this subtask's lease allows: 524288 bytes (gpu: SIM-GPU-")
                    .contains("a 0.5 share of 1 device");
        }
    }
}
