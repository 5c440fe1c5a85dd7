package io.flinkdevices.sdk.internal;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class NearMissTest {

    private static final List<String> KEYS = List.of("timeout", "nvidia-smi.path", "device.types", "amount");

    @Test
    @DisplayName("suggests the closest key within the distance, ignoring case")
    void closest() {
        assertThat(NearMiss.closest("timout", KEYS, 2)).contains("timeout");
        assertThat(NearMiss.closest("Device.Typse", KEYS, 2)).contains("device.types");
        assertThat(NearMiss.closest("ammount", KEYS, 2)).contains("amount");
    }

    @Test
    @DisplayName("two swapped neighbours cost one edit")
    void transposition() {
        assertThat(NearMiss.distance("typse", "types")).isEqualTo(1);
        assertThat(NearMiss.distance("kitten", "sitting")).isEqualTo(3);
    }

    @Test
    @DisplayName("suggests nothing too far away, and never the word itself")
    void nothing() {
        assertThat(NearMiss.closest("backend", KEYS, 2)).isEmpty();
        assertThat(NearMiss.closest("amount", List.of("amount"), 2)).isEmpty();
    }
}
