package io.flinkdevices.nvidia;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.config.DriverConfigException;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.Map;

/** What the NVIDIA driver tells a DRA claim, from which params. */
class NvidiaDraTest {

    private static final String P = "external-resource.gpu.param.";

    private static KubernetesResourceDecorator driver(String... kv) throws Exception {
        Configuration full = new Configuration();
        for (int i = 0; i < kv.length; i += 2) {
            full.setString(P + kv[i], kv[i + 1]);
        }
        return (KubernetesResourceDecorator)
                new NvidiaGpuDriverFactory(Map.of()).createExternalResourceDriver(new DelegatingConfiguration(full, P));
    }

    @Test
    @DisplayName("whole GPUs of class gpu.nvidia.com, nothing selected, under a PCIe root")
    void defaults() throws Exception {
        KubernetesResourceDecorator d = driver();
        assertThat(d.draDeviceClass()).isEqualTo("gpu.nvidia.com");
        assertThat(d.draAttributeDomain()).isEqualTo("gpu.nvidia.com");
        assertThat(d.draAttributes()).isEmpty();
        assertThat(d.draMinimumCapacity()).isEmpty();
        assertThat(d.draPublishesPcieRoot()).isTrue();
    }

    @Test
    @DisplayName("product name and memory become the productName attribute and the memory capacity")
    void productAndMemory() throws Exception {
        KubernetesResourceDecorator d = driver("kubernetes.dra.product-name", "NVIDIA A100-SXM4-40GB",
                "kubernetes.dra.min-memory", "40Gi");
        assertThat(d.draAttributes()).containsExactly(Map.entry("productName", "NVIDIA A100-SXM4-40GB"));
        assertThat(d.draMinimumCapacity()).containsExactly(Map.entry("memory", "40Gi"));
    }

    @Test
    @DisplayName("MIG units are mig.nvidia.com devices whose profile attribute is the MIG profile, in NVIDIA's attribute domain")
    void mig() throws Exception {
        KubernetesResourceDecorator d = driver("mig", "true", "mig.profile", "3g.40gb");
        assertThat(d.draDeviceClass()).isEqualTo("mig.nvidia.com");
        assertThat(d.draAttributeDomain()).isEqualTo("gpu.nvidia.com");
        assertThat(d.draAttributes()).containsExactly(Map.entry("profile", "3g.40gb"));
    }

    @Test
    @DisplayName("an operator's device class replaces the default")
    void deviceClass() throws Exception {
        assertThat(driver("kubernetes.dra.device-class", "a100.example.com").draDeviceClass()).isEqualTo("a100.example.com");
    }

    @Test
    @DisplayName("a bad device class, product name or memory is one error each, naming the full key")
    void badParams() {
        assertThatThrownBy(() -> driver("kubernetes.dra.device-class", "GPU_Class", "kubernetes.dra.min-memory", "40 GB",
                "kubernetes.dra.product-name", ""))
                .isInstanceOf(DriverConfigException.class)
                .hasMessageContaining(P + "kubernetes.dra.device-class: expected the name of a DRA DeviceClass")
                .hasMessageContaining("but got 'GPU_Class'")
                .hasMessageContaining(P + "kubernetes.dra.min-memory: expected a positive Kubernetes quantity of memory such as 40Gi")
                .hasMessageContaining("but got '40 GB'")
                .hasMessageContaining(P + "kubernetes.dra.product-name: is empty");
        assertThatThrownBy(() -> driver("kubernetes.dra.min-memory", "0Gi"))
                .hasMessageContaining(P + "kubernetes.dra.min-memory: expected a positive");
    }
}
