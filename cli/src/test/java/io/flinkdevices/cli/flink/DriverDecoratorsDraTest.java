package io.flinkdevices.cli.flink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.cli.flink.DriverDecorators.DecoratorException;
import io.flinkdevices.cli.flink.DriverDecorators.DraDevices;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.Map;

/** Reading a driver's DRA answers through sdk-api's decorator, found by name. */
class DriverDecoratorsDraTest {

    /** A driver of a plugin built before the DRA methods. */
    static final class OldDriver implements relocated.io.flinkdevices.sdk.deploy.KubernetesResourceDecorator {
        @Override
        public Map<String, Long> kubernetesResources(long amount) {
            return Map.of("example.com/dev", amount);
        }
    }

    @Test
    @DisplayName("a decorator from before the DRA methods answers as one that knows no device class")
    void olderSdkApi() throws Exception {
        DraDevices d = DriverDecorators.kubernetesDra(new OldDriver()).orElseThrow();
        assertThat(d.deviceClass()).isEmpty();
        assertThat(d.attributes()).isEmpty();
        assertThat(d.pcieRoot()).isFalse();
    }

    @Test
    @DisplayName("the domain defaults to the device class; the maps come back as they were answered")
    void answers() throws Exception {
        KubernetesResourceDecorator driver = new KubernetesResourceDecorator() {
            @Override
            public Map<String, Long> kubernetesResources(long amount) {
                return Map.of();
            }

            @Override
            public String draDeviceClass() {
                return "tpu.example.com";
            }

            @Override
            public Map<String, String> draAttributes() {
                return Map.of("generation", "v5");
            }

            @Override
            public Map<String, Boolean> draBooleanAttributes() {
                return Map.of("healthy", true);
            }
        };
        DraDevices d = DriverDecorators.kubernetesDra(driver).orElseThrow();
        assertThat(d.domain()).isEqualTo("tpu.example.com");
        assertThat(d.attributes()).containsExactly(Map.entry("generation", "v5"));
        assertThat(d.booleanAttributes()).containsExactly(Map.entry("healthy", true));
    }

    @Test
    @DisplayName("a boolean attribute answered as a string is refused, naming the method")
    void wrongType() {
        KubernetesResourceDecorator driver = new KubernetesResourceDecorator() {
            @Override
            public Map<String, Long> kubernetesResources(long amount) {
                return Map.of();
            }

            @Override
            @SuppressWarnings({"unchecked", "rawtypes"})
            public Map<String, Boolean> draBooleanAttributes() {
                return (Map) Map.of("rdma", "yes");
            }
        };
        assertThatThrownBy(() -> DriverDecorators.kubernetesDra(driver))
                .isInstanceOf(DecoratorException.class)
                .hasMessage("draBooleanAttributes() returned the entry rdma=yes, expected a name and true or false");
    }
}
