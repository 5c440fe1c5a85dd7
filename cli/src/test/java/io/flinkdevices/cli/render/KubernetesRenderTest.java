package io.flinkdevices.cli.render;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

class KubernetesRenderTest {

    @Test
    @DisplayName(
            "two resources that need different values of one node label: the first wins, the"
                    + " second is a problem")
    void conflictingNodeLabels() {
        Rendered r =
                KubernetesRender.render(
                        List.of(
                                new ResourceNeeds(
                                        "a", 1, Map.of("x.io/a", 1L), Map.of("zone", "z1"), true),
                                new ResourceNeeds(
                                        "b", 1, Map.of("x.io/b", 1L), Map.of("zone", "z2"), true)),
                        new Configuration(),
                        null,
                        List.of());

        assertThat(r.clusterFile()).contains("\"zone\": \"z1\"").doesNotContain("z2");
        assertThat(r.problems())
                .singleElement()
                .asString()
                .startsWith("b: needs node label zone=z2 but resource a needs zone=z1");
    }

    @Test
    @DisplayName(
            "a quantity other than the amount gets no config key (Flink would request the"
                    + " amount) and an existing one is to go")
    void quantityOtherThanAmount() {
        Rendered r =
                KubernetesRender.render(
                        List.of(new ResourceNeeds("nic", 2, Map.of("x.io/vf", 4L), Map.of(), true)),
                        Configuration.fromMap(
                                Map.of("external-resource.nic.kubernetes.config-key", "x.io/vf")),
                        null,
                        List.of());

        assertThat(r.configLines()).isEmpty();
        assertThat(r.configRemovals())
                .containsOnlyKeys("external-resource.nic.kubernetes.config-key");
        assertThat(r.clusterFile()).contains("\"x.io/vf\": \"4\"");
    }

    @Test
    @DisplayName("a resource of the RDMA driver gets IPC_LOCK in the main container and a note saying why")
    void rdmaNeedsIpcLock() {
        Rendered r =
                KubernetesRender.render(
                        List.of(new ResourceNeeds("rdma", 1, Map.of("rdma/hca_shared_devices_a", 1L), Map.of(), true)),
                        Configuration.fromMap(Map.of("external-resource.rdma.driver-factory.class", KubernetesRender.RDMA_FACTORY)),
                        null,
                        List.of());

        assertThat(r.clusterFile())
                .contains("    - name: flink-main-container\n      securityContext:\n        capabilities:\n          add: [\"IPC_LOCK\"]\n")
                .contains("\"rdma/hca_shared_devices_a\": \"1\"");
        assertThat(r.notes()).anySatisfy(n -> assertThat(n).startsWith("rdma: RDMA registers memory, which needs the IPC_LOCK capability"));

        Rendered gpu =
                KubernetesRender.render(
                        List.of(new ResourceNeeds("gpu", 1, Map.of("nvidia.com/gpu", 1L), Map.of(), true)),
                        new Configuration(),
                        null,
                        List.of());
        assertThat(gpu.clusterFile()).doesNotContain("IPC_LOCK");
    }

    @Test
    @DisplayName("quotes names and values so any text reads back unchanged")
    void quoting() {
        assertThat(Yaml.quote("a\"b\\c: #d")).isEqualTo("\"a\\\"b\\\\c: #d\"");
    }
}
