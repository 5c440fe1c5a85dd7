package io.flinkdevices.cli.render;

import io.flinkdevices.cli.flink.PodNeeds;

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
    @DisplayName("a driver that asks for IPC_LOCK gets it in the main container and its reason as a note; the CLI knows no driver")
    void rdmaNeedsIpcLock() {
        PodNeeds ipcLock = new PodNeeds(List.of("IPC_LOCK"), Map.of(), Map.of(), Map.of(), List.of(),
                List.of("RDMA registers memory, which needs the IPC_LOCK capability"));
        Rendered r =
                KubernetesRender.render(
                        List.of(new ResourceNeeds("rdma", 1, Map.of("rdma/hca_shared_devices_a", 1L), Map.of(), true, ipcLock)),
                        new Configuration(),
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
    @DisplayName("a third party's needs: capability, environment, host device path, hugepages and a toleration, merged over resources")
    void everyKindOfNeed() {
        PodNeeds npu = new PodNeeds(List.of("SYS_RAWIO"), Map.of("ZETA_VISIBLE", "all"), Map.of("/dev/zeta", "CharDevice"),
                Map.of("hugepages-2Mi", "1Gi"), List.of(Map.of("key", "zeta.example.com/npu", "operator", "Exists", "effect", "NoSchedule")),
                List.of("the NPU runtime maps /dev/zeta"));
        PodNeeds other = new PodNeeds(List.of("SYS_RAWIO", "IPC_LOCK"), Map.of("ZETA_VISIBLE", "none"), Map.of(), Map.of(), List.of(), List.of());
        Rendered r =
                KubernetesRender.render(
                        List.of(new ResourceNeeds("npu", 2, Map.of("zeta.example.com/npu", 2L), Map.of(), true, npu),
                                new ResourceNeeds("nic", 1, Map.of("x.io/vf", 1L), Map.of(), true, other)),
                        new Configuration(),
                        null,
                        List.of());

        assertThat(r.clusterFile())
                .contains("  volumes:\n    - name: host-dev-zeta\n      hostPath:\n        path: \"/dev/zeta\"\n        type: CharDevice\n")
                .contains("      env:\n        - name: ZETA_VISIBLE\n          value: \"all\"\n")
                .contains("          add: [\"SYS_RAWIO\", \"IPC_LOCK\"]\n")
                .contains("      volumeMounts:\n        - name: host-dev-zeta\n          mountPath: \"/dev/zeta\"\n")
                .contains("          \"hugepages-2Mi\": \"1Gi\"\n")
                .contains("    - key: \"zeta.example.com/npu\"\n      operator: \"Exists\"\n      effect: \"NoSchedule\"\n");
        assertThat(r.notes()).contains("npu: the NPU runtime maps /dev/zeta");
        assertThat(r.problems()).containsExactly(
                "nic: needs environment variable ZETA_VISIBLE=none but resource npu needs ZETA_VISIBLE=all; the template keeps all");
    }

    @Test
    @DisplayName("answers the API server would refuse are named, each with what was expected")
    void invalidAnswers() {
        PodNeeds bad = new PodNeeds(List.of("CAP_IPC_LOCK", "ipc_lock"), Map.of("1X", "v"), Map.of("dev/x", "Char", "/a//b", ""),
                Map.of("hugepages-2Mi", "lots"), List.of(Map.of("operator", "Equal"), Map.of("key", "k", "effect", "Never")), List.of());
        assertThat(bad.problems())
                .anySatisfy(p -> assertThat(p).contains("'CAP_IPC_LOCK' must be written without CAP_"))
                .anySatisfy(p -> assertThat(p).contains("capability 'ipc_lock' is not a Linux capability name"))
                .anySatisfy(p -> assertThat(p).contains("environment variable name '1X' is not valid"))
                .anySatisfy(p -> assertThat(p).contains("host path 'dev/x' is not an absolute path"))
                .anySatisfy(p -> assertThat(p).contains("hostPath type 'Char' of dev/x is not one of"))
                .anySatisfy(p -> assertThat(p).contains("host path '/a//b' is not normalised"))
                .anySatisfy(p -> assertThat(p).contains("the quantity 'lots' of hugepages-2Mi is not a positive Kubernetes quantity"))
                .anySatisfy(p -> assertThat(p).contains("an empty key needs operator Exists"))
                .anySatisfy(p -> assertThat(p).contains("effect 'Never' is not NoSchedule"))
                .hasSize(9);
        assertThat(PodNeeds.NONE.problems()).isEmpty();
    }

    @Test
    @DisplayName("quotes names and values so any text reads back unchanged")
    void quoting() {
        assertThat(Yaml.quote("a\"b\\c: #d")).isEqualTo("\"a\\\"b\\\\c: #d\"");
    }
}
