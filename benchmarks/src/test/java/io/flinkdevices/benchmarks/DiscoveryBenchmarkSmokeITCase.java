package io.flinkdevices.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Keeps the discovery benchmark runnable: a tiny run must load Flink's GPU driver from its bare
 * jar, run its script against the fake nvidia-smi in both modes, and print the table with our
 * driver's rows measured or marked "not built". It measures nothing; the figures come from the
 * full run described in README.
 */
class DiscoveryBenchmarkSmokeITCase {

    @Test
    @DisplayName("the discovery benchmark runs Flink's GPU driver beside ours and prints the table")
    void runsAndPrintsTable() throws Exception {
        DiscoveryBenchmark.Options o = DiscoveryBenchmark.Options.parse(new String[] {"--iterations", "3", "--warmup", "1"});
        if (System.getProperty("flink.gpu.scripts") == null) {
            o.scripts = java.nio.file.Path.of("target/flink-gpu-scripts");
            o.flinkJar = java.nio.file.Path.of("target/flink-external-resource-gpu.jar");
        }
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8)) {
            DiscoveryBenchmark.runInChild(o, out);
        }
        String table = buffer.toString(StandardCharsets.UTF_8);
        System.out.println(table);
        assertThat(table)
                .contains("| one bare fake nvidia-smi spawn")
                .contains("| Flink 2.3.0 GPUDriver, plain")
                .contains("| Flink 2.3.0 GPUDriver, coordination")
                .contains("| flink-devices NvidiaGpuDriver, coordination");
        boolean oursBuilt;
        try {
            Class.forName(DiscoveryBenchmark.OUR_FACTORY);
            oursBuilt = true;
        } catch (ClassNotFoundException e) {
            oursBuilt = false;
        }
        if (oursBuilt) {
            assertThat(table).contains("coordination: Flink / ours = ");
        } else {
            assertThat(table).contains("flink-devices NvidiaGpuDriver: not built");
        }
    }
}
