package io.flinkdevices.samples;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.samples.fpga.FirJobOptions;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** The main job's argument handling, through {@link DevicesJob#execute} (no cluster starts). */
class DevicesJobArgsTest {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int execute(String... args) throws Exception {
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            return DevicesJob.execute(args, o, e);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"--help", "-h"})
    @DisplayName("--help and -h print the usage and exit 0, whatever else is given")
    void help(String flag) throws Exception {
        assertThat(execute("--batch", "abc", flag)).isZero();

        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo(DevicesJob.usage()).startsWith("Usage: bin/run-devices-job");
        assertThat(err.toString(StandardCharsets.UTF_8)).isEmpty();
    }

    @Test
    @DisplayName("an unknown option is one line on stderr and exit 2, before anything prints or starts")
    void unknownOption() throws Exception {
        assertThat(execute("--x", "1")).isEqualTo(2);

        assertThat(err.toString(StandardCharsets.UTF_8))
                .isEqualTo("run-devices-job: unknown option --x (see --help)" + System.lineSeparator());
        // the GPU part prints its report before the FPGA part reads its options: nothing here
        assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    }

    @Test
    @DisplayName("a bad value is one line naming the option, exit 2")
    void badValue() throws Exception {
        assertThat(execute("--devices", "cpu", "--batch", "abc")).isEqualTo(2);

        assertThat(err.toString(StandardCharsets.UTF_8))
                .isEqualTo("run-devices-job: --batch: expected an integer in 1..1048576, got 'abc' (see --help)" + System.lineSeparator());
        assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    }

    @Test
    @DisplayName("the usage lists every exit condition the README lists, and the summary line names every part")
    void exitConditionsAndSummary() throws Exception {
        String usage = DevicesJob.usage();
        assertThat(usage)
                .contains("every subtask of the NVIDIA, AMD and RDMA parts got its device")
                .contains("the enrichment scored every")
                .contains("ML_PREDICT returned every row once")
                .contains("the FIR job filtered every sample correctly")
                .contains("2  a bad option");
        assertThat(DevicesJob.summary(true, true, true, true, "ok"))
                .isEqualTo("Summary: NVIDIA ok, AMD ok, RDMA ok, ML_PREDICT ok, FPGA (OpenCL) ok; exit status 0");
        assertThat(DevicesJob.summary(true, true, false, true, "ok"))
                .isEqualTo("Summary: NVIDIA ok, AMD ok, RDMA FAILED, ML_PREDICT ok, FPGA (OpenCL) ok; exit status 1");
        assertThat(DevicesJob.summary(true, true, true, true, "skipped (no OpenCL here)"))
                .isEqualTo("Summary: NVIDIA ok, AMD ok, RDMA ok, ML_PREDICT ok, FPGA (OpenCL) skipped (no OpenCL here); exit status 0");
        assertThat(DevicesJob.summary(true, true, true, true, "FAILED")).endsWith("FPGA (OpenCL) FAILED; exit status 1");
        assertThat(DevicesJob.summary(true, true, true, false, "ok")).contains("ML_PREDICT FAILED").endsWith("exit status 1");
    }

    @Test
    @DisplayName("the usage lists every option with the default the main job really uses")
    void usageListsEveryOptionWithItsDefault() throws Exception {
        String usage = DevicesJob.usage();
        FirJobOptions d = DevicesJob.fpgaOptions();

        assertThat(FirJobOptions.OPTIONS).allSatisfy(option -> assertThat(usage).contains("  " + option + " "));
        assertThat(usage)
                .contains("(default " + d.devices().name().toLowerCase(java.util.Locale.ROOT) + ")")
                .contains("(default " + d.deviceTypes() + ")")
                .contains("(default " + d.platformPattern() + ")")
                .contains("samples the FIR job filters (default " + d.samples() + ")")
                .contains("samples per kernel run (default " + d.batch() + ")")
                .contains("(default " + d.sensors() + ")")
                .contains("(default " + d.taps() + ")")
                .contains("(default " + d.parallelism() + ")")
                .contains("-h, --help");
        assertThat(d.bitstream()).isNull();
        assertThat(usage).contains("(default: none, fir.cl is built from");
    }
}
