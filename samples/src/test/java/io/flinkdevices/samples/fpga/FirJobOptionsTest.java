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
        FirJob.Options o =
                FirJob.Options.parse(
                        "--devices", "LOCAL",
                        "--batch", "128",
                        "--samples=5000000000",
                        "--sensors", "3",
                        "--taps", "7",
                        "--parallelism=4",
                        "--bitstream", "/opt/fir.aocx",
                        "--device-types", "accelerator, cpu",
                        "--platform-pattern", "Intel\\(R\\)");

        assertThat(o.devices()).isEqualTo(FirJob.Devices.LOCAL);
        assertThat(o.batch()).isEqualTo(128);
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
        FirJob.Options o = FirJob.Options.parse(new FirJob.Options().samples(42).batch(8), "--taps", "3");

        assertThat(o.samples()).isEqualTo(42);
        assertThat(o.batch()).isEqualTo(8);
        assertThat(o.taps()).isEqualTo(3);
        assertThat(o.devices()).isEqualTo(FirJob.Devices.DRIVER);
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
                "--batch abc                | --batch: expected a positive integer, got 'abc'",
                "--batch 0                  | --batch: expected a positive integer, got '0'",
                "--batch=-3                 | --batch: expected a positive integer, got '-3'",
                "--batch 99999999999        | --batch: expected a positive integer up to 2147483647, got '99999999999'",
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
        assertThatThrownBy(() -> FirJob.Options.parse(args.trim().split(" +")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(message);
    }
}
