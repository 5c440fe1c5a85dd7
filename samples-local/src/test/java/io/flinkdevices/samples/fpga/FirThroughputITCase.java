package io.flinkdevices.samples.fpga;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

class FirThroughputITCase {

    @Test
    @DisplayName("the FIR harness measures the per-record map and the batched job per batch size, with the split, the kernel alone and the bare loop")
    void harnessRuns() throws Exception {
        OpenClAvailability.require(OpenClAvailability.POCL);
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        List<FirThroughput.Row> rows;
        try (PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8)) {
            FirJobOptions o =
                    new FirJobOptions()
                            .devices(FirJobOptions.Devices.LOCAL)
                            .platformPattern("Portable")
                            .deviceTypes("CPU")
                            .samples(20_000)
                            .taps(16)
                            .parallelism(1);
            rows = FirThroughput.run(o, List.of(64, 512), 0.05, 1, out);
        }
        String table = buffer.toString(StandardCharsets.UTF_8);
        System.out.println(table);
        assertThat(rows).extracting(r -> r.path).containsExactly("map", "opencl", "opencl");
        assertThat(rows).allSatisfy(r -> {
            assertThat(r.samples).isEqualTo(20_000);
            assertThat(r.mismatches).isZero();
            assertThat(r.checked).as("outputs compared with the CPU reference").isPositive();
        });
        assertThat(rows.subList(1, 3)).allSatisfy(r -> {
            assertThat(r.nanosMarshal).isPositive();
            assertThat(r.nanosKernel).isPositive();
            assertThat(r.kernelAlone).isPositive();
            assertThat(r.bare).isPositive();
        });
        assertThat(table)
                .contains("| per-record CPU map  ")
                .contains("| batched job         |    512 |")
                .contains("batch 512: the batched job ")
                .contains("every checked output within tolerance");
    }
}
