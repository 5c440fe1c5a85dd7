package io.flinkdevices.sdk.deploy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/** Cases from Hadoop's {@code ResourceUtils}: its name pattern and its reserved names. */
class YarnResourceNamesTest {

    @ParameterizedTest(name = "{0}")
    @ValueSource(
            strings = {
                "yarn.io/gpu",
                "yarn.io/fpga",
                "gpu",
                "resource1",
                "a-b.c_d",
                "my-domain.io/gpu",
                "3com.io/gpu",
                "nvidia.com/gpu_mig-1g.10gb"
            })
    @DisplayName("names that Hadoop accepts are valid")
    void valid(String name) {
        assertThat(YarnResourceNames.validate(name)).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"memory-mb", "vcores", "memory"})
    @DisplayName("Yarn's built-in resources are refused as device resources")
    void reserved(String name) {
        assertThat(YarnResourceNames.validate(name))
                .containsExactly(
                        "'" + name + "' is one of Yarn's built-in resources, not a device resource");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(
            strings = {
                "1gpu",
                "yarn.io/1gpu",
                "yarn.io/",
                "/gpu",
                "-yarn.io/gpu",
                "yarn-.io/gpu",
                "yarn..io/gpu",
                "yarn.io/gpu/0",
                "yarn_io/gpu",
                "yarn.io/g pu",
                "gpü"
            })
    @DisplayName("names outside Hadoop's pattern are refused with the expected form")
    void invalid(String name) {
        assertThat(YarnResourceNames.validate(name))
                .singleElement()
                .asString()
                .startsWith("'" + name + "' is not a valid Yarn resource name")
                .contains("'yarn.io/gpu'");
    }

    @Test
    @DisplayName("empty and null names are refused")
    void empty() {
        assertThat(YarnResourceNames.validate("")).containsExactly("a Yarn resource name must not be empty");
        assertThat(YarnResourceNames.validate(null)).hasSize(1);
    }

    @Test
    @DisplayName("amounts are positive whole numbers")
    void amounts() {
        assertThat(YarnResourceNames.validateAmount("yarn.io/gpu", 2)).isEmpty();
        assertThat(YarnResourceNames.validateAmount("yarn.io/gpu", 0))
                .containsExactly(
                        "the amount of Yarn resource 'yarn.io/gpu' must be a positive whole number but is 0");
    }
}
