package io.flinkdevices.samples.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Keeps the pipeline benchmark whose figures docs/measured-figures.md quotes runnable: one small
 * run must print every line the docs take a figure from. It measures nothing here.
 */
class PipelineThroughputSmokeITCase {

    @Test
    @DisplayName("a small run prints the block alone, the job's rows, the best of each and the CPU path against its operator")
    void printsEveryFigure() throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            PipelineThroughput.main(new String[] {"--records", "20000", "--dims", "64", "--batch", "256", "--repeat", "1",
                "--matvec-records", "2000", "--modes", "checksum", "--variants", "chained,network"});
        } finally {
            System.setOut(original);
        }
        String out = bytes.toString(StandardCharsets.UTF_8);
        original.print(out);
        assertThat(out)
                .contains("pipeline: 20000 records of 64 floats")
                .containsPattern("run 1, the block alone \\(no Flink: .*\\): [0-9.]+ s, [0-9.]+ M records/s")
                .containsPattern("run 1, chained: source -> batching -> no-compute \\(checksum\\) -> sink: [0-9.]+ s, [0-9.]+ M records/s")
                .containsPattern("run 1, network: source -> batching -> no-compute \\(checksum\\) -> sink: ")
                .containsPattern("best of 1, chained \\(checksum\\): [0-9.]+ M records/s wall")
                .containsPattern("run 1, CPU path: inside the batch calls [0-9]+ records/s \\(all subtasks\\); first vector to last"
                        + " product [0-9]+ records/s = [0-9.]+% of it");
    }
}
