package io.flinkdevices.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

@DisplayName("The device health guard")
class DeviceHealthGuardTest {

    private static ExternalResourceInfo info(Map<String, String> props) {
        return ForeignInfo.of(props);
    }

    private static Map<String, String> port(String health, String action) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("device", "mlx5_0");
        m.put("health", health);
        m.put("health.device", "mlx5_0/1");
        m.put("health.action", action);
        if (!health.equals("ok")) {
            m.put("health.reason", "port mlx5_0/1 state DOWN (phys_state Disabled)");
            m.put("health.since", "2026-11-26T12:03:07Z");
        }
        return m;
    }

    @Test
    @DisplayName("throws for a failed device with fail-tasks, naming the resource, device, reason and since")
    void failTasks() {
        DeviceHealthGuard guard = DeviceHealthGuard.of("rdma", List.of(info(port("failed", "fail-tasks"))));
        assertThatThrownBy(guard::check)
                .isInstanceOf(DeviceFailedException.class)
                .hasMessageStartingWith("Device mlx5_0/1 of external resource 'rdma' failed: port mlx5_0/1 state DOWN"
                        + " (phys_state Disabled) (since 2026-11-26T12:03:07Z)")
                .hasMessageContaining("external-resource.rdma.param.health.action: fail-tasks");
    }

    @Test
    @DisplayName("does not throw for ok or degraded devices, with report, or for devices without monitoring")
    void noThrow() {
        DeviceHealthGuard guard = DeviceHealthGuard.of("rdma", List.of(info(port("ok", "fail-tasks")),
                info(port("degraded", "fail-tasks")), info(port("failed", "report")), info(Map.of("device", "mlx5_1"))));
        guard.check();
        assertThat(guard.failedDevices()).containsExactly("mlx5_0/1: port mlx5_0/1 state DOWN (phys_state Disabled)");
    }

    @Test
    @DisplayName("healthy() leaves out failed devices, whatever the action, so a restarted task picks another; all failed: throws")
    void healthyPick() {
        Map<String, String> second = new LinkedHashMap<>(port("ok", "fail-tasks"));
        second.put("health.device", "mlx5_0/2");
        ExternalResourceInfo failed = info(port("failed", "report"));
        ExternalResourceInfo ok = info(second);
        ExternalResourceInfo unmonitored = info(Map.of("device", "mlx5_1"));
        assertThat(DeviceHealthGuard.healthy("rdma", List.of(failed, ok, unmonitored))).containsExactly(ok, unmonitored);
        assertThatThrownBy(() -> DeviceHealthGuard.healthy("rdma", List.of(failed)))
                .isInstanceOf(DeviceFailedException.class)
                .hasMessageStartingWith("Device mlx5_0/1 of external resource 'rdma' failed");
        assertThat(DeviceHealthGuard.healthy("rdma", List.of())).isEmpty();
    }
}
