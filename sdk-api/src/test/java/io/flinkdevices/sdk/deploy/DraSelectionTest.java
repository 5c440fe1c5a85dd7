package io.flinkdevices.sdk.deploy;

import io.flinkdevices.sdk.config.DriverParams;

import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The DRA selection the NVIDIA and AMD drivers read from the shared params. */
class DraSelectionTest {

    private static DriverParams params(String... keyValues) {
        Configuration c = new Configuration();
        for (int i = 0; i < keyValues.length; i += 2) {
            c.setString(keyValues[i], keyValues[i + 1]);
        }
        return DriverParams.of(c, "gpu");
    }

    @Test
    @DisplayName("no params: the driver's default class, no attribute, no capacity")
    void defaults() {
        DriverParams p = params();
        DraSelection dra = DraSelection.read(p, "gpu.nvidia.com");

        assertThat(dra.deviceClass()).isEqualTo("gpu.nvidia.com");
        assertThat(dra.attributes()).isEmpty();
        assertThat(dra.minimumCapacity()).isEmpty();
        assertThat(p.problems()).isEmpty();
    }

    @Test
    @DisplayName("the params: their class, productName, least memory; the attributes map takes the driver's own")
    void fromParams() {
        DriverParams p =
                params(
                        DraParams.DEVICE_CLASS, "mig.nvidia.com",
                        DraParams.PRODUCT_NAME, "NVIDIA H100 80GB HBM3",
                        DraParams.MIN_MEMORY, "40Gi");
        DraSelection dra = DraSelection.read(p, "gpu.nvidia.com");

        assertThat(dra.deviceClass()).isEqualTo("mig.nvidia.com");
        Map<String, String> attributes = dra.attributes();
        attributes.put("profile", "1g.10gb");
        assertThat(attributes)
                .containsExactly(
                        Map.entry("productName", "NVIDIA H100 80GB HBM3"), Map.entry("profile", "1g.10gb"));
        assertThat(dra.attributes()).as("a new map each time").containsOnlyKeys("productName");
        assertThat(dra.minimumCapacity()).containsExactly(Map.entry("memory", "40Gi"));
        assertThat(p.problems()).isEmpty();
    }

    @Test
    @DisplayName("bad values are problems naming the full key; the selection leaves them out")
    void badValues() {
        DriverParams p =
                params(
                        DraParams.DEVICE_CLASS, "GPU_Class",
                        DraParams.PRODUCT_NAME, "",
                        DraParams.MIN_MEMORY, "lots");
        DraSelection dra = DraSelection.read(p, "");

        assertThat(dra.deviceClass()).isEmpty();
        assertThat(dra.attributes()).isEmpty();
        assertThat(dra.minimumCapacity()).isEmpty();
        assertThat(p.problems())
                .hasSize(3)
                .anySatisfy(m -> assertThat(m).startsWith("external-resource.gpu.param.kubernetes.dra.device-class: expected"))
                .anySatisfy(m -> assertThat(m).startsWith("external-resource.gpu.param.kubernetes.dra.product-name: is empty"))
                .anySatisfy(m -> assertThat(m).startsWith("external-resource.gpu.param.kubernetes.dra.min-memory: expected"));
    }

    @Test
    @DisplayName("validateAnswers: what keeps a driver's DRA answers out of a claim, one line each")
    void answers() {
        assertThat(DraParams.validateAnswers("gpu.nvidia.com", "", Map.of("productName", "H100"), Map.of(), Map.of("memory", "80Gi")))
                .isEmpty();
        assertThat(DraParams.validateAnswers("", "", Map.of(), Map.of(), Map.of()))
                .as("a driver that knows no device class")
                .isEmpty();
        assertThat(
                        DraParams.validateAnswers(
                                "Gpu Class",
                                "dra.net",
                                Map.of("product-name", "x"),
                                Map.of("rdma", true),
                                Map.of("memory", "0")))
                .containsExactly(
                        "the device class 'Gpu Class' is not a DNS subdomain",
                        "'product-name' is not a DRA attribute or capacity name (a C identifier of at most 32 characters)",
                        "the capacity memory must be a positive Kubernetes quantity but is '0'");
        assertThat(DraParams.validateAnswers("x.example.com", "Bad_Domain", Map.of(), Map.of(), Map.of()))
                .containsExactly("the attribute domain 'Bad_Domain' is not a DNS subdomain");
    }
}
