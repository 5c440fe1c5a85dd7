package io.flinkdevices.sdk.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.config.DriverConfigException;
import io.flinkdevices.sdk.config.DriverParams;

import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.Map;

@DisplayName("Monitor settings")
class MonitorSettingsTest {

    private static MonitorSettings read(Map<String, String> values) throws DriverConfigException {
        DriverParams p = DriverParams.of(Configuration.fromMap(values), "rdma");
        MonitorSettings s = MonitorSettings.read(p);
        p.validate();
        return s;
    }

    @Test
    @DisplayName("default to every 10 s with fail-tasks")
    void defaults() throws Exception {
        MonitorSettings s = read(Map.of());
        assertThat(s.interval()).isEqualTo(Duration.ofSeconds(10));
        assertThat(s.enabled()).isTrue();
        assertThat(s.action()).isEqualTo(HealthAction.FAIL_TASKS);
        assertThat(s.name()).isEqualTo("rdma");
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "0 s", "0ms", " 0 "})
    @DisplayName("turn monitoring off with an interval of 0, in any unit")
    void zeroIsOff(String zero) throws Exception {
        assertThat(read(Map.of("monitor.interval", zero)).enabled()).isFalse();
    }

    @Test
    @DisplayName("read stop-taskmanager, with the full key prefix for its log line")
    void stopTaskManager() throws Exception {
        MonitorSettings s = read(Map.of("health.action", "stop-taskmanager"));
        assertThat(s.action()).isEqualTo(HealthAction.STOP_TASKMANAGER);
        assertThat(s.keyPrefix()).isEqualTo("external-resource.rdma.param.");
    }

    @Test
    @DisplayName("read an interval and the report action")
    void values() throws Exception {
        MonitorSettings s = read(Map.of("monitor.interval", "500 ms", "health.action", "report"));
        assertThat(s.interval()).isEqualTo(Duration.ofMillis(500));
        assertThat(s.action()).isEqualTo(HealthAction.REPORT);
    }

    @ParameterizedTest
    @ValueSource(strings = {"-1 s", "soon", "10 parsecs", "50 ms", "2 d", "1.5 s", ""})
    @DisplayName("refuse a bad interval with one message naming the full key, the value and what is expected")
    void badInterval(String bad) {
        assertThatThrownBy(() -> read(Map.of("monitor.interval", bad)))
                .isInstanceOf(DriverConfigException.class)
                .hasMessageContaining("external-resource.rdma.param.monitor.interval: expected 0 (monitoring off) or a duration from 100 ms to 1 d")
                .hasMessageContaining("'" + bad.strip() + "'");
    }

    @Test
    @DisplayName("refuse an unknown action naming the full key and the known actions")
    void badAction() {
        assertThatThrownBy(() -> read(Map.of("health.action", "quarantine")))
                .isInstanceOf(DriverConfigException.class)
                .hasMessageContaining("external-resource.rdma.param.health.action: expected one of report, fail-tasks, stop-taskmanager but got 'quarantine'");
    }

    @Test
    @DisplayName("report a bad interval and a bad action together")
    void bothAtOnce() {
        assertThatThrownBy(() -> read(Map.of("health.action", "panic", "monitor.interval", "never")))
                .hasMessageContaining("param.monitor.interval")
                .hasMessageContaining("param.health.action");
    }

    @Test
    @DisplayName("keep a quarantined device out for 5 min of health by default, and read another recover-after")
    void recoverAfter() throws Exception {
        assertThat(read(Map.of()).recoverAfter()).isEqualTo(Duration.ofMinutes(5));
        assertThat(read(Map.of("health.recover-after", "30 s")).recoverAfter()).isEqualTo(Duration.ofSeconds(30));
        assertThat(read(Map.of("health.recover-after", "0")).recoverAfter()).isEqualTo(Duration.ZERO);
    }

    @ParameterizedTest
    @ValueSource(strings = {"-1 s", "later", "10 parsecs", "2 d", "1.5 min", ""})
    @DisplayName("refuse a bad recover-after with one message naming the full key, the value and what is expected")
    void badRecoverAfter(String bad) {
        assertThatThrownBy(() -> read(Map.of("health.recover-after", bad)))
                .isInstanceOf(DriverConfigException.class)
                .hasMessageContaining("external-resource.rdma.param.health.recover-after: expected 0 (back at the first healthy sample) or a duration up to 1 d")
                .hasMessageContaining("'" + bad.strip() + "'");
    }
}
