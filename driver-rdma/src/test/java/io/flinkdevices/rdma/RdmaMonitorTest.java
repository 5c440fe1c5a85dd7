package io.flinkdevices.rdma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.config.DriverConfigException;
import io.flinkdevices.sdk.info.RdmaInfo;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;
import io.flinkdevices.testkit.fake.FirstSample;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** The RDMA driver's monitor on a fake host that changes while the infos are in use. */
@DisplayName("The RDMA driver's monitor")
@ExtendWith(StopDeviceMonitors.class)
class RdmaMonitorTest {

    @TempDir Path temp;
    private final List<RdmaDriver> drivers = new ArrayList<>();

    @AfterEach
    void stop() {
        drivers.forEach(RdmaDriver::stopMonitor);
    }

    private RdmaDriver driver(FakeFileTree sys, String... kv) throws Exception {
        Configuration c = new Configuration();
        c.setString("sysfs.root", sys.root().toString());
        for (int i = 0; i < kv.length; i += 2) {
            c.setString(kv[i], kv[i + 1]);
        }
        RdmaDriver d = (RdmaDriver) new RdmaDriverFactory().createExternalResourceDriver(c);
        drivers.add(d);
        return d;
    }

    private static void await(String what, Supplier<Boolean> condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.get()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(10);
        }
    }

    @Test
    @DisplayName("reads ok and the port counters, flips to failed when the port goes DOWN, and recovers when it comes back")
    void portDownAndBack() throws Exception {
        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).installOn(FakeHost.create(temp));
        ExternalResourceInfo info = FirstSample.await(driver(sys, "monitor.interval", "100 ms").retrieveResourceInfo(1)).get(0);

        assertThat(info.getProperty("health")).contains("ok");
        assertThat(info.getProperty("health.device")).contains("mlx5_0/1");
        assertThat(info.getProperty("metric.port_rcv_data")).contains("0");
        assertThat(info.getProperty("metric.port_state")).contains("4");
        assertThat(info.getKeys()).contains("metric.port_xmit_data", "metric.symbol_error", "metric.link_downed",
                "metric.port_phys_state", "metric.monitor.errors");

        FakeRdmaHost.addToCounter(sys, "mlx5_0", 1, "port_rcv_data", 4096);
        await("the counter moves", () -> info.getProperty("metric.port_rcv_data").equals(Optional.of("4096")));

        long t0 = System.nanoTime();
        FakeRdmaHost.portDown(sys, "mlx5_0", 1);
        await("failed", () -> info.getProperty("health").equals(Optional.of("failed")));
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as("two 100 ms intervals plus scheduling on a loaded machine").isLessThan(2000);
        assertThat(info.getProperty("health.reason")).contains("port mlx5_0/1 state DOWN (phys_state Disabled)");
        assertThat(info.getProperty("metric.link_downed")).contains("1");

        FakeRdmaHost.portUp(sys, "mlx5_0", 1);
        await("ok again", () -> info.getProperty("health").equals(Optional.of("ok")));
        assertThat(info.getProperty("health.reason")).isEmpty();
        // the typed view keeps reading the live keys
        assertThat(RdmaInfo.from(info).getProperty("health")).contains("ok");
    }

    @Test
    @DisplayName("a port whose link goes into LinkErrorRecovery while ACTIVE reads degraded, never failed, and ok once LinkUp again")
    void linkErrorRecoveryIsDegraded() throws Exception {
        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true, true).installOn(FakeHost.create(temp));
        List<ExternalResourceInfo> infos = FirstSample.await(driver(sys, "monitor.interval", "100 ms").retrieveResourceInfo(2));
        ExternalResourceInfo second = infos.stream().filter(i -> i.getProperty("health.device").equals(Optional.of("mlx5_0/2")))
                .findFirst().orElseThrow();

        FakeRdmaHost.portDegraded(sys, "mlx5_0", 2);
        await("degraded", () -> second.getProperty("health").equals(Optional.of("degraded")));
        assertThat(second.getProperty("health.reason").orElseThrow())
                .startsWith("port mlx5_0/2 state ACTIVE but phys_state LinkErrorRecovery");
        assertThat(infos).filteredOn(i -> i != second).extracting(i -> i.getProperty("health").orElseThrow()).containsOnly("ok");

        FakeRdmaHost.portUp(sys, "mlx5_0", 2);
        await("ok again", () -> second.getProperty("health").equals(Optional.of("ok")));
    }

    @Test
    @DisplayName("a garbage counter (negative, over 64 bits, NaN) is a failed sample: counted, degraded after three, never a metric or a failed port, and counting resumes with good values")
    void garbageCounter() throws Exception {
        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).installOn(FakeHost.create(temp));
        ExternalResourceInfo info = FirstSample.await(driver(sys, "monitor.interval", "100 ms").retrieveResourceInfo(1)).get(0);
        assertThat(info.getProperty("metric.monitor.errors")).contains("0");

        for (String garbage : List.of("-5", "18446744073709551615", "NaN")) {
            long before = Long.parseLong(info.getProperty("metric.monitor.errors").orElseThrow());
            sys.file("class/infiniband/mlx5_0/ports/1/counters/port_rcv_data", garbage);
            await("a failed sample for " + garbage,
                    () -> Long.parseLong(info.getProperty("metric.monitor.errors").orElseThrow()) > before);
            assertThat(info.getProperty("metric.port_rcv_data")).as("never the garbage as a metric").contains("0");
            assertThat(info.getProperty("health")).as("never failed").isNotEqualTo(Optional.of("failed"));
        }
        await("degraded after three failed samples", () -> info.getProperty("health").equals(Optional.of("degraded")));
        assertThat(info.getProperty("health.reason").orElseThrow())
                .contains(sys.path("class/infiniband/mlx5_0/ports/1/counters/port_rcv_data") + " of port mlx5_0/1 is '")
                .contains("expected a whole number from 0 to 9223372036854775807");

        sys.file("class/infiniband/mlx5_0/ports/1/counters/port_rcv_data", "8192");
        await("ok again with the good value", () -> info.getProperty("health").equals(Optional.of("ok"))
                && info.getProperty("metric.port_rcv_data").equals(Optional.of("8192")));
    }

    @Test
    @DisplayName("reads a device that vanished as failed, naming the port")
    void deviceVanishes() throws Exception {
        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).installOn(FakeHost.create(temp));
        ExternalResourceInfo info = FirstSample.await(driver(sys, "monitor.interval", "100 ms").retrieveResourceInfo(1)).get(0);
        FakeRdmaHost.removeDevice(sys, "mlx5_0");
        await("failed", () -> info.getProperty("health").equals(Optional.of("failed")));
        assertThat(info.getProperty("health.reason").orElseThrow()).startsWith("port mlx5_0/1 vanished");
    }

    @Test
    @DisplayName("with monitor.interval 0 hands out infos without live keys")
    void off() throws Exception {
        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).installOn(FakeHost.create(temp));
        ExternalResourceInfo info = driver(sys, "monitor.interval", "0").retrieveResourceInfo(1).iterator().next();
        assertThat(info.getKeys()).doesNotContain("health").noneMatch(k -> k.startsWith("metric.") || k.startsWith("health."));
        assertThat(info.getProperty("health")).isEmpty();
    }

    @Test
    @DisplayName("refuses a bad interval and action in one message naming the full keys")
    void badInput() {
        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).installOn(FakeHost.create(temp));
        assertThatThrownBy(() -> driver(sys, "monitor.interval", "often", "health.action", "reboot"))
                .isInstanceOf(DriverConfigException.class)
                .hasMessageContaining("param.monitor.interval: expected 0 (monitoring off) or a duration from 100 ms to 1 d such as '10 s' but got 'often'")
                .hasMessageContaining("param.health.action: expected one of report, fail-tasks, stop-taskmanager but got 'reboot'");
    }
}
