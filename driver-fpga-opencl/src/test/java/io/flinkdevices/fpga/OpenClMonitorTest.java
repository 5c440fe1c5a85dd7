package io.flinkdevices.fpga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.config.DriverConfigException;
import io.flinkdevices.sdk.coordination.DeviceQuarantine;
import io.flinkdevices.sdk.info.FpgaInfo;
import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FirstSample;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** The OpenCL driver's monitor: CL_DEVICE_AVAILABLE per interval, and a vendor's board check. */
@DisplayName("The OpenCL driver's monitor")
@ExtendWith(StopDeviceMonitors.class)
class OpenClMonitorTest {

    @TempDir Path temp;
    private final List<OpenClFpgaDriver> drivers = new ArrayList<>();

    @AfterEach
    void stop() {
        drivers.forEach(OpenClFpgaDriver::stopMonitor);
    }

    private List<ExternalResourceInfo> infos(OpenCl openCl, long amount, Map<String, String> params) throws Exception {
        Map<String, String> all = new HashMap<>(params);
        all.putIfAbsent("platform.pattern", "Intel");
        ExternalResourceDriver d = OpenClFpgaDriverTest.create(openCl, all);
        drivers.add((OpenClFpgaDriver) d);
        return FirstSample.await(d.retrieveResourceInfo(amount));
    }

    private static void await(String what, Supplier<Boolean> condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.get()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(10);
        }
    }

    @Test
    @DisplayName("a runtime that stops answering fails each sample within the timeout: counted, degraded, the monitor stops at once")
    void runtimeThatDoesNotAnswer() throws Exception {
        java.util.concurrent.CountDownLatch answers = new java.util.concurrent.CountDownLatch(1);
        FakeOpenCl cl = OpenClFpgaDriverTest.host();
        List<ExternalResourceInfo> boards = infos(cl, 1, Map.of("monitor.interval", "100 ms", "timeout", "300 ms"));
        ExternalResourceInfo b0 = boards.get(0);
        assertThat(b0.getProperty("health")).contains("ok");
        cl.hangsUntil(answers);
        try {
            await("samples failing in a row", () -> b0.getProperty("health.reason").orElse("").contains("samples in a row failed"));
            assertThat(b0.getProperty("health")).contains("degraded");
            assertThat(b0.getProperty("health.reason").orElseThrow()).contains("CL_DEVICE_AVAILABLE of").contains("timeout: 300 ms");
            long stop = System.nanoTime();
            drivers.get(0).stopMonitor();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stop)).as("the monitor is not stuck in the runtime")
                    .isLessThan(4000);
        } finally {
            answers.countDown();
        }
    }

    @Test
    @DisplayName("available reads 1 and health ok; a board the runtime stops offering reads 0 and failed, and back")
    void available() throws Exception {
        FakeOpenCl cl = OpenClFpgaDriverTest.host();
        List<ExternalResourceInfo> boards = infos(cl, 2, Map.of("monitor.interval", "100 ms"));
        ExternalResourceInfo b0 = boards.get(0);
        assertThat(b0.getProperty("health")).contains("ok");
        assertThat(b0.getProperty("metric.available")).contains("1");
        assertThat(b0.getProperty("health.device")).contains("Intel(R) FPGA SDK for OpenCL(TM)/0/pac_a10 : Intel PAC Platform (pac_ee00000)");

        cl.available("pac_a10 : Intel PAC Platform (pac_ee00000)", false);
        await("failed", () -> b0.getProperty("health").equals(Optional.of("failed")));
        assertThat(b0.getProperty("metric.available")).contains("0");
        assertThat(b0.getProperty("health.reason").orElseThrow()).contains("CL_DEVICE_AVAILABLE is false").contains("pac_ee00000");
        assertThat(boards.get(1).getProperty("health")).contains("ok");

        cl.available("pac_a10 : Intel PAC Platform (pac_ee00000)", true);
        await("ok again", () -> b0.getProperty("health").equals(Optional.of("ok")));
    }

    @Test
    @DisplayName("a vendor's board check (a tool run through ExternalCommand) fails a board; with coordination it is quarantined")
    void boardCheck() throws Exception {
        FakeHost host = FakeHost.create(temp);
        host.install(FakeExecutable.named("board-check").stdout("ok\n"));
        Path file = temp.resolve("fpga.coordination");
        Map<String, String> params = Map.of("monitor.interval", "100 ms", "health.action", "report",
                "board-check.class", ToolBoardCheck.class.getName(), "board-check.tool", host.bin("board-check").toString(),
                "coordination.enabled", "true", "coordination.file", file.toString());
        ExternalResourceInfo b0 = infos(OpenClFpgaDriverTest.host(), 1, params).get(0);
        assertThat(b0.getProperty("health")).contains("ok");

        host.install(FakeExecutable.named("board-check").stdout("failed: DDR bank 1 calibration failed\n"));
        await("failed", () -> b0.getProperty("health").equals(Optional.of("failed")));
        assertThat(b0.getProperty("health.reason").orElseThrow()).contains("DDR bank 1 calibration failed").contains(ToolBoardCheck.class.getName());
        await("quarantined", () -> DeviceQuarantine.peek(file).size() == 1);
        assertThat(DeviceQuarantine.peek(file).get(0).deviceId()).isEqualTo(FpgaInfo.from(b0).getPlatform() + "/0/" + FpgaInfo.from(b0).getDeviceName());

        host.install(FakeExecutable.named("board-check").stdout("garbage\n"));
        long errors = Long.parseLong(b0.getProperty("metric.monitor.errors").orElseThrow());
        await("a garbage verdict is counted, not a health change", () -> Long.parseLong(b0.getProperty("metric.monitor.errors").orElseThrow()) > errors);
        assertThat(b0.getProperty("health")).contains("failed");
    }

    @Test
    @DisplayName("a board-check.class that is missing or no BoardHealthCheck, or its own bad key: one message naming the full key")
    void badBoardCheck() {
        assertThatThrownBy(() -> infos(OpenClFpgaDriverTest.host(), 1, Map.of("board-check.class", "com.vendor.Nope")))
                .isInstanceOf(DriverConfigException.class)
                .hasMessageContaining("external-resource.fpga.param.board-check.class: expected the name of a public class")
                .hasMessageContaining("'com.vendor.Nope' cannot be loaded");
        assertThatThrownBy(() -> infos(OpenClFpgaDriverTest.host(), 1, Map.of("board-check.class", String.class.getName())))
                .hasMessageContaining("external-resource.fpga.param.board-check.class")
                .hasMessageContaining("java.lang.String does not implement it");
        assertThatThrownBy(() -> infos(OpenClFpgaDriverTest.host(), 1, Map.of("board-check.class", ToolBoardCheck.class.getName())))
                .hasMessageContaining("external-resource.fpga.param.board-check.tool: expected the path of the board's check tool");
        assertThatThrownBy(() -> infos(OpenClFpgaDriverTest.host(), 1, Map.of("monitor.interval", "often")))
                .hasMessageContaining("external-resource.fpga.param.monitor.interval: expected 0 (monitoring off)");
    }

    @Test
    @DisplayName("on PoCL for real: CL_DEVICE_AVAILABLE reads 1 under the process-wide lock")
    void realPocl() throws Exception {
        RealOpenCl.assume(RealOpenCl.POCL);
        ExternalResourceInfo cpu = infos(new JoclOpenCl(), 1, Map.of("platform.pattern", "Portable", "device.types", "CPU",
                "monitor.interval", "100 ms")).get(0);
        assertThat(cpu.getProperty("metric.available")).contains("1");
        assertThat(cpu.getProperty("health")).contains("ok");
    }
}
