package io.flinkdevices.sdk.info;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DeviceSelectionTest {

    private static List<ExternalResourceInfo> gpus(int count) {
        List<ExternalResourceInfo> infos = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            infos.add(GpuInfo.builder("nvidia", i).uuid("GPU-" + (char) ('z' - i)).build());
        }
        return infos;
    }

    private static int pick(List<ExternalResourceInfo> infos, int subtask) {
        return DeviceSelection.forSubtask(infos, subtask, GpuInfo::from).orElseThrow().getIndex();
    }

    @Test
    @DisplayName("subtask i gets device i, in numeric index order (10 after 9, not after 1)")
    void numericOrder() {
        List<ExternalResourceInfo> infos = gpus(12);

        for (int subtask = 0; subtask < 12; subtask++) {
            assertThat(pick(infos, subtask)).isEqualTo(subtask);
        }
    }

    @Test
    @DisplayName("every task agrees whatever order its set of infos iterates in")
    void orderIndependent() {
        List<ExternalResourceInfo> shuffled = gpus(8);
        Collections.shuffle(shuffled, new Random(42));
        List<ExternalResourceInfo> reversed = gpus(8);
        Collections.reverse(reversed);
        Set<ExternalResourceInfo> set = new HashSet<>(gpus(8));

        for (int subtask = 0; subtask < 8; subtask++) {
            assertThat(pick(shuffled, subtask))
                    .isEqualTo(pick(reversed, subtask))
                    .isEqualTo(pick(new ArrayList<>(set), subtask));
        }
    }

    @Test
    @DisplayName("with more subtasks than devices, subtasks wrap around and share")
    void wraps() {
        List<ExternalResourceInfo> infos = gpus(3);

        assertThat(pick(infos, 3)).isEqualTo(0);
        assertThat(pick(infos, 7)).isEqualTo(1);
    }

    @Test
    @DisplayName("no devices means no pick, and a negative subtask index is refused")
    void edges() {
        assertThat(DeviceSelection.forSubtask(List.of(), 0, GpuInfo::from)).isEmpty();
        assertThat(DeviceSelection.forSubtask(null, 0, GpuInfo::from)).isEmpty();
        assertThatThrownBy(() -> DeviceSelection.forSubtask(gpus(2), -1, GpuInfo::from))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("subtaskIndex must be >= 0 but is -1");
    }

    /** GPU {@code index} with live keys {@code live} (key, value, ...), as a monitor attaches them. */
    private static ExternalResourceInfo monitored(int index, String... live) {
        java.util.Map<String, String> values = new java.util.LinkedHashMap<>();
        for (int i = 0; i < live.length; i += 2) {
            values.put(live[i], live[i + 1]);
        }
        LiveProperties props = new LiveProperties() {
            @Override
            public java.util.Optional<String> get(String key) {
                return java.util.Optional.ofNullable(values.get(key));
            }

            @Override
            public java.util.Collection<String> keys() {
                return values.keySet();
            }
        };
        return GpuInfo.builder("nvidia", index).uuid("GPU-" + (char) ('z' - index)).live(props).build();
    }

    @Test
    @DisplayName("the live keys a monitor changes play no part: the order is the fixed properties' while the job runs")
    void liveKeysDoNotReorder() {
        // health.since and a metric that would put GPU 1 first if they were compared
        List<ExternalResourceInfo> infos = List.of(
                monitored(0, "health", "ok", "health.since", "2026-11-27T10:00:05Z", "metric.gpu_util", "90"),
                monitored(1, "health", "ok", "health.since", "2026-11-27T10:00:01Z", "metric.gpu_util", "10"),
                monitored(2, "health", "degraded", "health.since", "2026-11-27T10:00:03Z", "metric.gpu_util", "50"));

        for (int subtask = 0; subtask < 3; subtask++) {
            assertThat(pick(infos, subtask)).isEqualTo(subtask);
        }
    }

    @Test
    @DisplayName("a failed device is passed over while another is left, so a restarted task picks a working one; all failed: picked among all")
    void failedPassedOver() {
        List<ExternalResourceInfo> infos = List.of(
                monitored(0, "health", "ok"),
                monitored(1, "health", "failed", "health.reason", "Xid 79 (GPU has fallen off the bus) at 12:03:07"),
                monitored(2, "health", "ok"));

        assertThat(pick(infos, 0)).isEqualTo(0);
        assertThat(pick(infos, 1)).as("subtask 1's device failed: it shares GPU 2").isEqualTo(2);
        assertThat(pick(infos, 2)).isEqualTo(0);

        List<ExternalResourceInfo> allFailed = List.of(monitored(0, "health", "failed"), monitored(1, "health", "failed"));
        assertThat(pick(allFailed, 1)).isEqualTo(1);
    }

    @Test
    @DisplayName("foreign infos are picked the same way as our own")
    void foreignInfos() {
        List<ExternalResourceInfo> foreign = new ArrayList<>();
        for (ExternalResourceInfo info : gpus(4)) {
            foreign.add(new MapBackedInfo(((GpuInfo) info).asMap()));
        }
        Collections.reverse(foreign);

        assertThat(pick(foreign, 2)).isEqualTo(2);
    }
}
