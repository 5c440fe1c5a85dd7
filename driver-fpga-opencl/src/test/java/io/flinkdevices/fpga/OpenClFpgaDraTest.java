package io.flinkdevices.fpga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.config.DriverConfigException;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.Map;

/** What the OpenCL driver tells a DRA claim, from which params. */
class OpenClFpgaDraTest {

    private static final String P = "external-resource.fpga.param.";

    private static KubernetesResourceDecorator driver(String... kv) throws Exception {
        Configuration full = new Configuration();
        for (int i = 0; i < kv.length; i += 2) {
            full.setString(P + kv[i], kv[i + 1]);
        }
        return (KubernetesResourceDecorator)
                new OpenClFpgaDriverFactory(new FakeOpenCl(), Map.of())
                        .createExternalResourceDriver(new DelegatingConfiguration(full, P));
    }

    @Test
    @DisplayName("no FPGA DRA driver is known: no device class unless the operator names one, no selectors")
    void deviceClassFromParam() throws Exception {
        assertThat(driver().draDeviceClass()).isEmpty();
        KubernetesResourceDecorator d = driver("kubernetes.dra.device-class", "fpga.example.com");
        assertThat(d.draDeviceClass()).isEqualTo("fpga.example.com");
        assertThat(d.draAttributes()).isEmpty();
        assertThat(d.draPublishesPcieRoot()).isFalse();
    }

    @Test
    @DisplayName("a bad device class names the full key")
    void badParams() {
        assertThatThrownBy(() -> driver("kubernetes.dra.device-class", "fpga/example"))
                .isInstanceOf(DriverConfigException.class)
                .hasMessageContaining(P + "kubernetes.dra.device-class: expected the name of a DRA DeviceClass")
                .hasMessageContaining("but got 'fpga/example'");
    }
}
