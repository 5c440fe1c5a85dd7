package io.flinkdevices.job;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

@DisplayName("Device metrics")
class DeviceMetricsTest {

    private static ExternalResourceInfo info(Map<String, String> props) {
        return ForeignInfo.of(props);
    }

    @Test
    @DisplayName("a task opened before its device's first sample still gets the device's metric gauges")
    void registrationBeforeTheFirstSample() throws Exception {
        Map<String, String> props = new ConcurrentHashMap<>(Map.of(
                "device", "mlx5_0", "health.device", "mlx5_0/1", "health.action", "report", "metric.monitor.errors", "0"));
        Thread firstSample = new Thread(() -> {
            try {
                Thread.sleep(300);
            } catch (InterruptedException e) {
                return;
            }
            props.put("metric.port_rcv_data", "0");
            props.put("metric.symbol_error", "0");
            props.put("health", "ok");
        });
        firstSample.start();
        try {
            DeviceMetrics metrics = DeviceMetrics.register(new UnregisteredMetricsGroup(), "rdma", List.of(info(props)));
            assertThat(metrics.gauges("mlx5_0/1")).containsExactlyInAnyOrder("health", "monitor_errors", "port_rcv_data", "symbol_error");
        } finally {
            firstSample.join();
        }
    }

    @Test
    @DisplayName("devices without monitoring get no gauges and are not waited for")
    void unmonitored() {
        DeviceMetrics metrics = DeviceMetrics.register(new UnregisteredMetricsGroup(), "rdma", List.of(info(Map.of("device", "mlx5_1"))));
        assertThat(metrics.devices()).isEmpty();
    }
}
