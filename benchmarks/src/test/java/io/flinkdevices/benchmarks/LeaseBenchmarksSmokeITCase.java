package io.flinkdevices.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Keeps the lease benchmarks whose figures docs/measured-figures.md quotes runnable: each runs once,
 * small, and must print the lines the docs take their figures from. They measure nothing here; the
 * figures come from the full runs the docs describe.
 */
class LeaseBenchmarksSmokeITCase {

    /** What {@code main} printed on System.out. */
    private interface Main {
        void run() throws Exception;
    }

    private static String printed(Main main) throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            main.run();
        } finally {
            System.setOut(original);
        }
        String out = bytes.toString(StandardCharsets.UTF_8);
        original.print(out);
        return out;
    }

    @Test
    @DisplayName("the lease cost benchmark prints p50 and p99 of every row, and starts no process")
    void leaseCost() throws Exception {
        assertThat(printed(() -> LeaseCostBenchmark.main(new String[] {"--rounds", "2", "--batch", "50", "--warmup", "50"})))
                .containsPattern("\\| LeaseTable.shared\\(\\) acquire \\+ release, 1 whole GPU +\\| +[0-9.]+ us \\| +[0-9.]+ us")
                .containsPattern("\\| DeviceLeases.acquire \\+ close, gauges \\(default\\) +\\| +[0-9.]+ us \\| +[0-9.]+ us")
                .contains("child processes of this JVM: 0 before, 0 after");
    }

    @Test
    @DisplayName("the lease pipeline benchmark runs both variants on the local device cluster and prints their ratios")
    void leasePipeline() throws Exception {
        assertThat(printed(() -> LeasePipelineBenchmark.main(new String[] {"--records", "20000", "--rounds", "1"})))
                .containsPattern("lease / index, net job time: per round median [0-9.]+, lowest [0-9.]+, highest [0-9.]+ over 1 rounds")
                .containsPattern("lease / index, task threads' CPU, open to close: per round median [0-9.]+");
    }
}
