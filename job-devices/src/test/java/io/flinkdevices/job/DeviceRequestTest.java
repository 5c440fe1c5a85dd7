package io.flinkdevices.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.flink.api.common.operators.SlotSharingGroup;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;

@DisplayName("A device request")
class DeviceRequestTest {

    @ParameterizedTest
    @ValueSource(doubles = {0, -0.5, 1.0000001, 2, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY})
    @DisplayName("refuses a share outside (0, 1], naming resource and value")
    void badShare(double share) {
        assertThatThrownBy(() -> DeviceRequest.share("gpu", share))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a share of external resource 'gpu' must be greater than 0 and at most 1 (a whole device) but is "
                        + share);
    }

    @Test
    @DisplayName("refuses a share finer than a millionth, a count below 1 and an empty name")
    void otherBadArguments() {
        assertThatThrownBy(() -> DeviceRequest.share("gpu", 1e-9)).hasMessageContaining("must be at least 0.000001");
        assertThatThrownBy(() -> DeviceRequest.devices("gpu", 0))
                .hasMessage("a lease of external resource 'gpu' needs a count of at least 1 whole device but got 0");
        assertThatThrownBy(() -> DeviceRequest.devices("gpu", -3)).hasMessageContaining("but got -3");
        assertThatThrownBy(() -> DeviceRequest.whole(" ")).hasMessageContaining("name of a lease must not be empty");
        assertThatThrownBy(() -> DeviceRequest.whole("gpu").sharingKey("a\nb")).hasMessageContaining("'a?b'");
        assertThatThrownBy(() -> DeviceRequest.whole("gpu").waitAtMost(Duration.ofSeconds(-1)))
                .hasMessageContaining("waits from 0 s to 60 min");
        assertThatThrownBy(() -> DeviceRequest.whole("gpu").waitAtMost(Duration.ofDays(2))).hasMessageContaining("PT48H");
    }

    @Test
    @DisplayName("declares its amount on a slot sharing group, as fine-grained resource management reads it")
    void declaresOnSlotSharingGroup() {
        SlotSharingGroup half = DeviceRequest.share("gpu", 0.5).declareOn(SlotSharingGroup.newBuilder("g").setCpuCores(1).setTaskHeapMemoryMB(64)).build();
        assertThat(half.getExternalResources()).containsEntry("gpu", 0.5);
        SlotSharingGroup two = DeviceRequest.devices("gpu", 2).declareOn(SlotSharingGroup.newBuilder("h").setCpuCores(1).setTaskHeapMemoryMB(64)).build();
        assertThat(two.getExternalResources()).containsEntry("gpu", 2.0);
    }
}
