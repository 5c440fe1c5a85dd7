package io.flinkdevices.sdk.internal;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Guards the one place where sdk-api reads a private Flink field. When this fails after a Flink
 * upgrade, every driver error falls back to {@code external-resource.<resource>.param.}: adapt
 * {@link ParamPrefix} to the new {@link DelegatingConfiguration}.
 */
class ParamPrefixTest {

    @Test
    @DisplayName("Flink's DelegatingConfiguration still has the private String field 'prefix'")
    void flinkFieldStillReadable() {
        assertThat(ParamPrefix.canReadFlinkPrefix())
                .as(
                        "ParamPrefix can no longer read DelegatingConfiguration.prefix of this Flink"
                                + " version; driver errors would lose the resource name")
                .isTrue();
    }

    @Test
    @DisplayName("the prefix Flink gives a factory's view is recovered")
    void recoversPrefix() {
        Configuration view =
                new DelegatingConfiguration(new Configuration(), "external-resource.gpu.param.");

        assertThat(ParamPrefix.of(view)).isEqualTo("external-resource.gpu.param.");
    }

    @Test
    @DisplayName("a plain configuration or a view with another prefix gets the placeholder")
    void placeholder() {
        assertThat(ParamPrefix.of(new Configuration())).isEqualTo(ParamPrefix.UNKNOWN);
        assertThat(ParamPrefix.of(new DelegatingConfiguration(new Configuration(), "metrics.")))
                .isEqualTo(ParamPrefix.UNKNOWN);
    }
}
