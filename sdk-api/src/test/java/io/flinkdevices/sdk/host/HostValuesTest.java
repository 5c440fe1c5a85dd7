package io.flinkdevices.sdk.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.DeviceDriverException;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Range checks of what a tool, file or library reports before it becomes a metric or a property. */
@DisplayName("HostValues")
class HostValuesTest {

    private final HostValues gpu = HostValues.of("nvidia-smi (/usr/bin/nvidia-smi)", "GPU GPU-1");

    @Test
    @DisplayName("plain decimal numbers within the bound are taken as they are")
    void goodNumbers() throws Exception {
        assertThat(gpu.number("temperature.gpu", " 35 ", 0, HostValues.MAX_CELSIUS, "°C")).isEqualTo(35.0);
        assertThat(gpu.number("power.draw", "112.45", 0, 10_000, "W")).isEqualTo(112.45);
        assertThat(gpu.number("utilization.gpu", "100", 0, HostValues.PERCENT, "%")).isEqualTo(100.0);
        assertThat(gpu.number("memory.used", "1.5e3", 0, 1e9, "MiB")).isEqualTo(1500.0);
        assertThat(gpu.number("temperature", 71.0, 0, HostValues.MAX_CELSIUS, "°C")).isEqualTo(71.0);
        assertThat(gpu.count("ecc", "0")).isZero();
        assertThat(gpu.count("ecc", "9223372036854775807")).isEqualTo(Long.MAX_VALUE);
        assertThat(gpu.unsignedCount("ecc", 12)).isEqualTo(12);
    }

    @ParameterizedTest(name = "temperature ''{0}'' is refused")
    @ValueSource(strings = {"NaN", "-5", "1e308", "Infinity", "-Infinity", "18446744073709551615", "0x10", "35d", "hot", "", "\u0001\u0002"})
    @DisplayName("NaN, infinities, negatives, values beyond the physical bound and words are refused, naming source, field, device and bound")
    void badNumbers(String text) {
        assertThatThrownBy(() -> gpu.number("temperature.gpu", text, 0, HostValues.MAX_CELSIUS, "°C"))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessageStartingWith("nvidia-smi (/usr/bin/nvidia-smi): temperature.gpu of GPU GPU-1 is '")
                .hasMessageEndingWith("'; expected a number from 0 to 200 °C");
    }

    @Test
    @DisplayName("a library's NaN, infinity or out-of-range number is refused with its value")
    void badLibraryNumbers() {
        assertThatThrownBy(() -> gpu.number("power", Double.NaN, 0, 10_000, "W"))
                .hasMessage("nvidia-smi (/usr/bin/nvidia-smi): power of GPU GPU-1 is 'NaN'; expected a number from 0 to 10000 W");
        assertThatThrownBy(() -> gpu.number("power", Double.POSITIVE_INFINITY, 0, 10_000, "W")).hasMessageContaining("is 'Infinity'");
        assertThatThrownBy(() -> gpu.number("temperature", -5, 0, HostValues.MAX_CELSIUS, "°C")).hasMessageContaining("is '-5'");
        assertThatThrownBy(() -> gpu.number("temperature", 1e308, 0, HostValues.MAX_CELSIUS, "°C")).hasMessageContaining("is '1E+308'");
    }

    @ParameterizedTest(name = "count ''{0}'' is refused")
    @ValueSource(strings = {"-5", "1.5", "18446744073709551615", "99999999999999999999", "9223372036854775808", "NaN", "\u00ff\u00fe", "+3", ""})
    @DisplayName("a count that is negative, fractional, over a signed 64-bit value or not a number is refused")
    void badCounts(String text) {
        assertThatThrownBy(() -> gpu.count("ecc.errors.uncorrected.volatile.total", text))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessageContaining("ecc.errors.uncorrected.volatile.total of GPU GPU-1 is '")
                .hasMessageEndingWith("expected a whole number from 0 to 9223372036854775807");
    }

    @Test
    @DisplayName("a library's unsigned all-ones count is refused and named as the unsigned value it is")
    void unsignedAllOnes() {
        assertThatThrownBy(() -> gpu.unsignedCount("ECC uncorrected volatile", -1L))
                .hasMessageContaining("is '18446744073709551615'; expected a whole number from 0 to 9223372036854775807");
    }

    @Test
    @DisplayName("identifiers with a line feed, a space, a tab, a no-break space or nothing at all are refused, saying where")
    void identifiers() throws Exception {
        assertThat(gpu.identifier("uuid", "GPU-5f1c2a3b-0000-1111-2222-333344445555")).isEqualTo("GPU-5f1c2a3b-0000-1111-2222-333344445555");
        assertThatThrownBy(() -> gpu.identifier("uuid", "GPU-1\nGPU-2 x"))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessage("nvidia-smi (/usr/bin/nvidia-smi): uuid of GPU GPU-1 is 'GPU-1?GPU-2 x'; expected an identifier of 1 to 256"
                        + " printable characters without spaces or control characters, but it has a line feed at position 6");
        assertThatThrownBy(() -> gpu.identifier("uuid", "GPU 1")).hasMessageEndingWith("but it has a space at position 4");
        assertThatThrownBy(() -> gpu.identifier("uuid", "GPU-\t1")).hasMessageEndingWith("but it has a tab at position 5");
        assertThatThrownBy(() -> gpu.identifier("uuid", "GPU-\u00a01")).hasMessageEndingWith("but it has the character U+00A0 at position 5");
        assertThatThrownBy(() -> gpu.identifier("uuid", "")).hasMessageEndingWith("but it is empty");
        assertThatThrownBy(() -> gpu.identifier("uuid", "G".repeat(300))).hasMessageEndingWith("but it has 300 characters");
    }
}
