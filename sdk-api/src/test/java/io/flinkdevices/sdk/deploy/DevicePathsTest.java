package io.flinkdevices.sdk.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

/** Per-card device nodes a Kubernetes decorator states, and their checks. */
@DisplayName("DevicePaths and kubernetesDevicePaths")
class DevicePathsTest {

    @Test
    @DisplayName("a pattern gives one path per card, in order, for the amount or for chosen cards")
    void numbered() {
        assertThat(DevicePaths.numbered("/dev/hexa{index}", "CharDevice", 3))
                .containsExactly(Map.entry("/dev/hexa0", "CharDevice"), Map.entry("/dev/hexa1", "CharDevice"),
                        Map.entry("/dev/hexa2", "CharDevice"));
        assertThat(DevicePaths.numbered("/dev/dri/renderD{index}", "", List.of(128, 130)))
                .containsExactly(Map.entry("/dev/dri/renderD128", ""), Map.entry("/dev/dri/renderD130", ""));
        assertThat(DevicePaths.numbered("/dev/hexa{index}", "CharDevice", 0)).isEmpty();
    }

    @Test
    @DisplayName("a pattern without {index} or with two, an unknown type and an absurd amount are refused")
    void refused() {
        assertThatThrownBy(() -> DevicePaths.numbered("/dev/hexa", "CharDevice", 2))
                .hasMessage("device path pattern '/dev/hexa' must hold {index} exactly once, such as /dev/hexa{index}");
        assertThatThrownBy(() -> DevicePaths.numbered("/dev/{index}/{index}", "CharDevice", 2))
                .hasMessageContaining("exactly once");
        assertThatThrownBy(() -> DevicePaths.numbered("/dev/hexa{index}", "chardevice", 2))
                .hasMessageStartingWith("hostPath type 'chardevice' of /dev/hexa{index} is not one of");
        assertThatThrownBy(() -> DevicePaths.numbered("/dev/hexa{index}", "CharDevice", 5000))
                .hasMessage("amount 5000 of devices for /dev/hexa{index}; expected 0 to 1024");
        assertThatThrownBy(() -> DevicePaths.numbered("/dev/hexa{index}", "CharDevice", List.of(-1)))
                .hasMessage("device index -1 for /dev/hexa{index}; expected 0 or more");
    }

    @Test
    @DisplayName("KubernetesPodNeeds checks device paths as host paths, and one type per path across both answers")
    void validated() {
        KubernetesResourceDecorator hexa = new KubernetesResourceDecorator() {
            @Override
            public Map<String, Long> kubernetesResources(long amount) {
                return Map.of();
            }

            @Override
            public Map<String, String> kubernetesHostPaths() {
                return Map.of("/dev/hexa0", "File");
            }

            @Override
            public Map<String, String> kubernetesDevicePaths(long amount) {
                return Map.of("/dev/hexa0", "CharDevice", "dev/hexa1", "CharDevice");
            }
        };
        assertThat(KubernetesPodNeeds.validate(hexa, 2)).containsExactlyInAnyOrder(
                "host path 'dev/hexa1' is not an absolute path",
                "host path /dev/hexa0 is a CharDevice in kubernetesDevicePaths(2) but a File in kubernetesHostPaths();"
                        + " expected one type per path");
    }
}
