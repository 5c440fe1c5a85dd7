package io.flinkdevices.samples.fpga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class FirJobOptionsTest {

    @Test
    @DisplayName("every option is read, as --name value and as --name=value")
    void readsEveryOption() {
        FirJobOptions o =
                FirJobOptions.parse(
                        "--devices", "LOCAL",
                        "--batch", "128",
                        "--slots", "5",
                        "--timeout-ms=2500",
                        "--block", "512",
                        "--samples=5000000000",
                        "--sensors", "3",
                        "--taps", "7",
                        "--parallelism=4",
                        "--bitstream", "/opt/fir.aocx",
                        "--device-types", "accelerator, cpu",
                        "--platform-pattern", "Intel\\(R\\)");

        assertThat(o.devices()).isEqualTo(FirJobOptions.Devices.LOCAL);
        assertThat(o.batch()).isEqualTo(128);
        assertThat(o.slots()).isEqualTo(5);
        assertThat(o.timeoutMs()).isEqualTo(2500);
        assertThat(o.block()).isEqualTo(512);
        assertThat(o.samples()).isEqualTo(5_000_000_000L);
        assertThat(o.sensors()).isEqualTo(3);
        assertThat(o.taps()).isEqualTo(7);
        assertThat(o.parallelism()).isEqualTo(4);
        assertThat(o.bitstream()).isEqualTo("/opt/fir.aocx");
        assertThat(o.deviceTypes()).isEqualTo("accelerator, cpu");
        assertThat(o.platformPattern()).isEqualTo("Intel\\(R\\)");
    }

    @Test
    @DisplayName("values not given keep the defaults they were parsed over")
    void keepsDefaults() {
        FirJobOptions o = FirJobOptions.parse(new FirJobOptions().samples(42).batch(8), "--taps", "3");

        assertThat(o.samples()).isEqualTo(42);
        assertThat(o.batch()).isEqualTo(8);
        assertThat(o.taps()).isEqualTo(3);
        assertThat(o.devices()).isEqualTo(FirJobOptions.Devices.DRIVER);
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @DisplayName("a bad argument is one line naming the option and what was wrong")
    @CsvSource(
            delimiter = '|',
            value = {
                "--x 1                      | unknown option --x",
                "--help                     | unknown option --help",
                "stray                      | unknown option stray",
                "--x=1                      | unknown option --x",
                "--batch abc                | --batch: expected an integer in 1..1048576, got 'abc'",
                "--batch 0                  | --batch: expected 1..1048576, got 0",
                "--batch=-3                 | --batch: expected 1..1048576, got -3",
                "--batch 99999999999        | --batch: expected 1..1048576, got 99999999999",
                "--slots 0                  | --slots: expected 1..16, got 0",
                "--slots 17                 | --slots: expected 1..16, got 17",
                "--timeout-ms 0             | --timeout-ms: expected 1..600000, got 0",
                "--timeout-ms 600001        | --timeout-ms: expected 1..600000, got 600001",
                "--block 0                  | --block: expected 1..65536, got 0",
                "--samples 1.5              | --samples: expected a positive integer, got '1.5'",
                "--sensors x                | --sensors: expected a positive integer, got 'x'",
                "--taps 0                   | --taps: expected a positive integer, got '0'",
                "--parallelism two          | --parallelism: expected a positive integer, got 'two'",
                "--devices gpu              | --devices: expected driver, local or cpu, got 'gpu'",
                "--device-types FPGA        | --device-types: expected a comma list of ACCELERATOR, CPU, GPU, CUSTOM, DEFAULT, ALL, got 'FPGA'",
                "--platform-pattern (       | --platform-pattern: expected a Java regular expression, got '(' (Unclosed group)",
                "--samples                  | --samples: needs a value",
                "--bitstream --batch 1      | --bitstream: needs a value, got the option --batch",
            })
    void badArgument(String args, String message) {
        assertThatThrownBy(() -> FirJobOptions.parse(args.trim().split(" +")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(message);
    }

    @ParameterizedTest(name = "{0}, {1}, {2} -> {3}")
    @DisplayName("batching arguments that cannot work, set in code, get one message naming the argument and the range")
    @CsvSource(
            delimiter = '|',
            value = {
                "0       | 3  | 1000   | --batch: expected 1..1048576, got 0",
                "1048577 | 3  | 1000   | --batch: expected 1..1048576, got 1048577",
                "4096    | 0  | 1000   | --slots: expected 1..16, got 0",
                "4096    | 99 | 1000   | --slots: expected 1..16, got 99",
                "4096    | 3  | 0      | --timeout-ms: expected 1..600000, got 0",
                "4096    | 3  | -5     | --timeout-ms: expected 1..600000, got -5",
            })
    void badBatchArgs(long batch, long slots, long timeoutMs, String message) {
        assertThatThrownBy(() -> new FirJobOptions().batch((int) batch).slots((int) slots).timeoutMs(timeoutMs).batchArgs())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(message);
    }
}
