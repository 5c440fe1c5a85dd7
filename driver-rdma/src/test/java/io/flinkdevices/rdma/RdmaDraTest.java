package io.flinkdevices.rdma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.config.DriverConfigException;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.Map;

/** What the RDMA driver tells a DRA claim, from which params. */
class RdmaDraTest {

    private static final String P = "external-resource.rdma.param.";

    private static KubernetesResourceDecorator driver(String... kv) throws Exception {
        Configuration full = new Configuration();
        for (int i = 0; i < kv.length; i += 2) {
            full.setString(P + kv[i], kv[i + 1]);
        }
        return (KubernetesResourceDecorator)
                new RdmaDriverFactory().createExternalResourceDriver(new DelegatingConfiguration(full, P));
    }

    @Test
    @DisplayName("no device class unless the operator names one: DraNet installs none")
    void noDefaultClass() throws Exception {
        assertThat(driver().draDeviceClass()).isEmpty();
    }

    @Test
    @DisplayName("RDMA-capable NICs of DraNet (dra.net attribute rdma true), under a PCIe root")
    void dranet() throws Exception {
        KubernetesResourceDecorator d = driver("kubernetes.dra.device-class", "dranet.net");
        assertThat(d.draDeviceClass()).isEqualTo("dranet.net");
        assertThat(d.draAttributeDomain()).isEqualTo("dra.net");
        assertThat(d.draBooleanAttributes()).containsExactly(Map.entry("rdma", true));
        assertThat(d.draPublishesPcieRoot()).isTrue();
    }

    @Test
    @DisplayName("product name and memory are no RDMA params; a bad device class names the full key")
    void badParams() {
        assertThatThrownBy(() -> driver("kubernetes.dra.device-class", "Dranet", "kubernetes.dra.min-memory", "1Gi"))
                .isInstanceOf(DriverConfigException.class)
                .hasMessageContaining(P + "kubernetes.dra.device-class: expected the name of a DRA DeviceClass")
                .hasMessageContaining(P + "kubernetes.dra.min-memory: unknown parameter");
    }
}
