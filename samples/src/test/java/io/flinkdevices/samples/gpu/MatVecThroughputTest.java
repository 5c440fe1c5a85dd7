package io.flinkdevices.samples.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

class MatVecThroughputTest {

    @Test
    @DisplayName("the throughput harness measures the CPU path per batch size and says why GPU rows are missing, synchronous and asynchronous")
    void harnessRuns() {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        List<MatVecThroughput.Row> rows;
        try (PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8)) {
            rows = MatVecThroughput.run(16, List.of(1, 8), List.of(1, 2), List.of(1, 2), 0.05, 0, out);
        }
        String table = buffer.toString(StandardCharsets.UTF_8);
        System.out.println(table);
        assertThat(rows).filteredOn(r -> r.path == MatVecBackend.Path.CPU).extracting(r -> r.batch).containsExactly(1, 8);
        assertThat(rows).allSatisfy(r -> {
            assertThat(r.records).isPositive();
            assertThat(r.maxError).isLessThanOrEqualTo(Matrix.generate(16, 16, 0).tolerance());
        });
        assertThat(table).contains("| CPU                 |      8 |").contains("GB/s moved");
        if (GpuAvailability.reasonWhyNot() != null) {
            assertThat(table).contains("GPU rows skipped: ").contains("GPU async rows skipped: CUDA device 0");
        } else {
            assertThat(table)
                    .contains("| GPU                 |      8 |")
                    .contains("| GPU async x2        |      8 |")
                    .contains("| GPU async x2, 2 thr |      8 |")
                    .contains("GPU async x2 / GPU = ");
            assertThat(rows)
                    .filteredOn(r -> r.slots > 0)
                    .extracting(r -> r.batch + "/" + r.slots + "/" + r.threads)
                    .containsExactly("1/1/1", "1/2/1", "1/1/2", "1/2/2", "8/1/1", "8/2/1", "8/1/2", "8/2/2");
        }
    }
}
