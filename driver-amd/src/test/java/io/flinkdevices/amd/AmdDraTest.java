package io.flinkdevices.amd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.config.DriverConfigException;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.Map;

/** What the AMD driver tells a DRA claim, from which params. */
class AmdDraTest {

    private static final String P = "external-resource.gpu.param.";

    private static KubernetesResourceDecorator driver(String... kv) throws Exception {
        Configuration full = new Configuration();
        for (int i = 0; i < kv.length; i += 2) {
            full.setString(P + kv[i], kv[i + 1]);
        }
        return (KubernetesResourceDecorator)
                new AmdGpuDriverFactory(Map.of()).createExternalResourceDriver(new DelegatingConfiguration(full, P));
    }

    @Test
    @DisplayName("whole GPUs are gpu.amd.com devices of type amdgpu, under a PCIe root")
    void defaults() throws Exception {
        KubernetesResourceDecorator d = driver();
        assertThat(d.draDeviceClass()).isEqualTo("gpu.amd.com");
        assertThat(d.draAttributeDomain()).isEqualTo("gpu.amd.com");
        assertThat(d.draAttributes()).containsExactly(Map.entry("type", "amdgpu"));
        assertThat(d.draPublishesPcieRoot()).isTrue();
    }

    @Test
    @DisplayName("a partition profile becomes type amdgpu-partition and partitionProfile cpx_nps4; product and memory too")
    void partition() throws Exception {
        KubernetesResourceDecorator d = driver("unit", "partition", "partition.profile", "cpx/nps4",
                "kubernetes.dra.product-name", "AMD Instinct MI300X", "kubernetes.dra.min-memory", "24Gi");
        assertThat(d.draAttributes()).containsExactly(Map.entry("productName", "AMD Instinct MI300X"),
                Map.entry("type", "amdgpu-partition"), Map.entry("partitionProfile", "cpx_nps4"));
        assertThat(d.draMinimumCapacity()).containsExactly(Map.entry("memory", "24Gi"));
    }

    @Test
    @DisplayName("any partition when no profile is given")
    void anyPartition() throws Exception {
        assertThat(driver("unit", "partition").draAttributes()).containsExactly(Map.entry("type", "amdgpu-partition"));
    }

    @Test
    @DisplayName("a compute mode without memory mode cannot be matched: the answer names the key to complete")
    void computeModeOnly() throws Exception {
        KubernetesResourceDecorator d = driver("unit", "partition", "partition.profile", "CPX");
        assertThatThrownBy(d::draAttributes)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith(P + "partition.profile: is 'CPX', a compute mode without a memory mode")
                .hasMessageContaining("CPX/NPS1, CPX/NPS4");
    }

    @Test
    @DisplayName("a bad device class or memory is one error each, naming the full key")
    void badParams() {
        assertThatThrownBy(() -> driver("kubernetes.dra.device-class", "gpu.amd.com.", "kubernetes.dra.min-memory", "-1Gi"))
                .isInstanceOf(DriverConfigException.class)
                .hasMessageContaining(P + "kubernetes.dra.device-class: expected the name of a DRA DeviceClass")
                .hasMessageContaining(P + "kubernetes.dra.min-memory: expected a positive Kubernetes quantity");
    }
}
