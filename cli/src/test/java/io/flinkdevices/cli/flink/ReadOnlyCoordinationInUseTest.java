package io.flinkdevices.cli.flink;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

/** Which of the devices a driver returned a live TaskManager holds, by the records' ids. */
class ReadOnlyCoordinationInUseTest {

    @Test
    @DisplayName("a MIG unit recorded as <GPU-uuid>/<MIG-uuid> is in use; a sibling unit and a longer uuid are not")
    void migUnitRecordedUnderItsGpu() {
        Map<String, String> held = Map.of("index", "0", "uuid", "MIG-a");
        Map<String, String> sibling = Map.of("index", "0", "uuid", "MIG-b");
        Map<String, String> longer = Map.of("index", "0", "uuid", "a");
        List<String> notes =
                ReadOnlyCoordination.inUse(List.of(held, sibling, longer), Map.of("GPU-1/MIG-a", 4242L));
        assertThat(notes).containsExactly("device 0 (MIG-a) is in use by pid 4242");
    }
}
