package io.flinkdevices.samples.rdma;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** Keeps the enrichment benchmark runnable; the figures come from the full run in docs/measured-figures.md. */
class EnrichmentThroughputITCase {

    @Test
    @DisplayName("the benchmark runs the job per batch size, measures lookup latency and prints the table")
    void harnessRuns() throws Exception {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        List<EnrichmentThroughput.Row> rows;
        try (PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8)) {
            rows = EnrichmentThroughput.run(List.of(1, 64), 4_000, 500, 1_000, out);
        }
        String table = buffer.toString(StandardCharsets.UTF_8);
        System.out.println(table);
        assertThat(rows).extracting(r -> r.batch).containsExactly(1, 64);
        assertThat(rows).allSatisfy(r -> {
            assertThat(r.job.mismatches).isZero();
            assertThat(r.job.checked).as("scores compared with the table").isPositive();
            assertThat(r.p50Micros).isPositive();
            assertThat(r.p99Micros).isGreaterThanOrEqualTo(r.p50Micros);
        });
        assertThat(table).contains("| TCP       |      1 |").contains("best batch 64: ");
    }
}
