package io.flinkdevices.benchmarks;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keeps the coordination benchmark runnable: a tiny run with 1 and 2 processes must print the
 * whole table without failed allocations. It measures nothing; the figures come from the full
 * run described in README.
 */
class BenchmarkSmokeITCase {

    @Test
    @DisplayName("the benchmark runs every implementation and prints the table")
    void runsAndPrintsTable() throws Exception {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        Map<String, CoordinationBenchmark.Row> rows;
        try (PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8)) {
            rows =
                    CoordinationBenchmark.run(
                            Path.of(System.getProperty("flink.gpu.scripts", "target/flink-gpu-scripts")),
                            List.of(1, 2),
                            0.02,
                            out);
        }
        String table = buffer.toString(StandardCharsets.UTF_8);
        System.out.println(table);
        assertThat(rows).hasSize(8);
        assertThat(rows.values()).allSatisfy(r -> assertThat(r.failed).isZero());
        assertThat(table)
                .contains("flink-devices DeviceCoordinator.allocate")
                .contains("Flink 2.3.0 nvidia-gpu-discovery.sh, coordination")
                .contains("Flink's coordinated script / DeviceCoordinator.allocate at p50");
    }
}
