package io.flinkdevices.amd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.config.DriverConfigException;
import io.flinkdevices.testkit.fake.FakeAmdHost;
import io.flinkdevices.testkit.fake.FakeAmdHost.Model;
import io.flinkdevices.testkit.fake.FakeHost;
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
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** The AMD driver's monitor on a fake host that changes while the infos are in use. */
@DisplayName("The AMD driver's monitor")
@ExtendWith(StopDeviceMonitors.class)
class AmdMonitorTest {

    @TempDir Path temp;
    private final List<AmdGpuDriver> drivers = new ArrayList<>();

    @AfterEach
    void stop() {
        drivers.forEach(AmdGpuDriver::stopMonitor);
    }

    private List<ExternalResourceInfo> infos(FakeAmdHost.Installed amd, long amount, String... kv) throws Exception {
        Configuration c = new Configuration();
        c.setString("sysfs.root", amd.sys().root().toString());
        c.setString("dev.root", amd.dev().root().toString());
        c.setString("backend", "sysfs");
        for (int i = 0; i < kv.length; i += 2) {
            c.setString(kv[i], kv[i + 1]);
        }
        AmdGpuDriver d = (AmdGpuDriver) new AmdGpuDriverFactory(Map.of()).createExternalResourceDriver(c);
        drivers.add(d);
        return FirstSample.await(d.retrieveResourceInfo(amount));
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
    @DisplayName("reads busy, VRAM, hwmon and RAS metrics; an uncorrectable RAS jump fails the GPU; a correctable one does not")
    void metricsAndRas() throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI300X, 2).installOn(FakeHost.create(temp));
        List<ExternalResourceInfo> gpus = infos(amd, 2, "monitor.interval", "100 ms");
        ExternalResourceInfo g0 = gpus.get(0);
        ExternalResourceInfo g1 = gpus.get(1);
        assertThat(g0.getProperty("health")).contains("ok");
        assertThat(g0.getProperty("health.device")).contains(FakeAmdHost.pciAddress(0));
        assertThat(g0.getKeys()).contains("metric.gpu_busy_percent", "metric.mem_info_vram_used", "metric.temperature_celsius",
                "metric.power_watts", "metric.ras_umc_ue", "metric.ras_umc_ce", "metric.ras_gfx_ue");
        assertThat(g0.getProperty("metric.temperature_celsius")).contains("35");
        assertThat(g0.getProperty("metric.power_watts")).contains("90");

        amd.busyPercent(0, 87).vramUsed(0, 1L << 30).rasErrors(0, "umc", 0, 5);
        await("metrics move", () -> g0.getProperty("metric.gpu_busy_percent").equals(Optional.of("87")));
        await("vram", () -> g0.getProperty("metric.mem_info_vram_used").equals(Optional.of(Long.toString(1L << 30))));
        await("ce", () -> g0.getProperty("metric.ras_umc_ce").equals(Optional.of("5")));
        assertThat(g0.getProperty("health")).as("correctable errors do not fail a GPU").contains("ok");

        amd.rasErrors(0, "umc", 2, 5);
        await("failed", () -> g0.getProperty("health").equals(Optional.of("failed")));
        assertThat(g0.getProperty("health.reason").orElseThrow()).contains("RAS umc uncorrectable errors 0 -> 2");
        assertThat(g1.getProperty("health")).contains("ok");
    }

    @Test
    @DisplayName("a GPU whose PCIe link trained narrower reads degraded, is handed out after the ok ones, and reads ok once the link is back at full width")
    void narrowLinkIsDegraded() throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI300X, 3).installOn(FakeHost.create(temp));
        amd.linkWidth(0, 8);
        List<ExternalResourceInfo> two = infos(amd, 2, "monitor.interval", "100 ms");
        assertThat(two).extracting(i -> i.getProperty("health.device").orElseThrow())
                .as("the degraded GPU 0 comes after every ok one").containsExactly(FakeAmdHost.pciAddress(1), FakeAmdHost.pciAddress(2));
        List<ExternalResourceInfo> all = infos(amd, 3, "monitor.interval", "100 ms");
        ExternalResourceInfo g0 = all.get(2);
        assertThat(g0.getProperty("health.device")).contains(FakeAmdHost.pciAddress(0));
        assertThat(g0.getProperty("health")).as("handed out when nothing better is left, never failed").contains("degraded");
        assertThat(g0.getProperty("health.reason").orElseThrow()).contains("PCIe link x8 of x16");

        amd.linkWidth(0, 16);
        await("ok again", () -> g0.getProperty("health").equals(Optional.of("ok")));
    }

    @Test
    @DisplayName("garbage RAS counts, temperatures, power and busy figures are failed samples: degraded after three, never a failed GPU, the last good metric kept; a UE rise is seen once the counts read right")
    void garbageNumbers() throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI300X, 1).installOn(FakeHost.create(temp));
        ExternalResourceInfo g = infos(amd, 1, "monitor.interval", "100 ms").get(0);
        String dir = "devices/pci0000:00/" + FakeAmdHost.pciAddress(0) + "/";
        String[][] cases = {
            {"ras/umc_err_count", "ue: 99999999999999999999\nce: 0\n", "ras/umc_err_count 'ue' of the GPU of", "is '99999999999999999999'; expected a whole number from 0 to 9223372036854775807"},
            {"ras/umc_err_count", "\u00ff\u00fe\u0007 random", "ras/umc_err_count of the GPU of", "expected '<ue|ce|de>: <count>' lines"},
            {"ras/umc_err_count", "ue: -5\nce: 0\n", "ras/umc_err_count 'ue'", "is '-5'; expected a whole number from 0"},
            {"hwmon/hwmon0/temp1_input", "1e308", "hwmon/hwmon0/temp1_input of the GPU of", "is '1e308'; expected a number from 0 to 200000 millidegrees Celsius"},
            {"hwmon/hwmon0/power1_average", "NaN", "hwmon/hwmon0/power1_average", "is 'NaN'; expected a number from 0 to 10000000000 microwatts"},
            {"gpu_busy_percent", "-5", "gpu_busy_percent of the GPU of", "is '-5'; expected a number from 0 to 100 %"},
            {"mem_info_vram_used", "18446744073709551615", "mem_info_vram_used", "is '18446744073709551615'; expected a number from 0 to 1125899906842624 bytes"},
        };
        for (String[] c : cases) {
            String good = amd.sys().read(dir + c[0]);
            amd.sys().file(dir + c[0], c[1]);
            await("degraded by " + c[0] + " '" + c[1] + "'", () -> g.getProperty("health").equals(Optional.of("degraded"))
                    && g.getProperty("health.reason").orElse("").contains(c[3]));
            assertThat(g.getProperty("health.reason").orElseThrow()).contains(c[2]);
            assertThat(g.getProperty("metric.ras_umc_ue")).as("the last good metric stays").contains("0");
            assertThat(g.getProperty("metric.temperature_celsius")).contains("35");
            amd.sys().file(dir + c[0], good);
            await("ok again after " + c[0], () -> g.getProperty("health").equals(Optional.of("ok")));
        }
        assertThat(Long.parseLong(g.getProperty("metric.monitor.errors").orElseThrow())).isGreaterThanOrEqualTo(3L * cases.length);

        amd.rasErrors(0, "umc", 2, 0);
        await("a UE rise after garbage still fails the GPU", () -> g.getProperty("health").equals(Optional.of("failed")));
        assertThat(g.getProperty("health.reason").orElseThrow()).contains("RAS umc uncorrectable errors 0 -> 2");
    }

    @Test
    @DisplayName("a vanished render node fails its GPU; partitions report their parent GPU's health")
    void renderNodeAndPartitions() throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI300X, 2, "CPX", "NPS4").installOn(FakeHost.create(temp));
        List<ExternalResourceInfo> parts = infos(amd, 16, "unit", "partition", "monitor.interval", "100 ms");
        ExternalResourceInfo p0 = parts.get(0);
        ExternalResourceInfo p3 = parts.get(3);
        ExternalResourceInfo other = parts.get(9);
        assertThat(p3.getProperty("metric.gpu_busy_percent")).as("a partition reads its GPU's metrics").contains("0");
        amd.busyPercent(0, 40);
        await("partition 3 sees its GPU's load", () -> p3.getProperty("metric.gpu_busy_percent").equals(Optional.of("40")));

        amd.rasErrors(0, "gfx", 1, 0);
        await("every partition of GPU 0 fails", () -> p3.getProperty("health").equals(Optional.of("failed"))
                && p0.getProperty("health").equals(Optional.of("failed")));
        assertThat(other.getProperty("health")).as("GPU 1's partitions stay ok").contains("ok");

        amd.removeRenderNode(9);
        await("partition 9's render node vanished", () -> other.getProperty("health").equals(Optional.of("failed")));
        assertThat(other.getProperty("health.reason").orElseThrow()).contains("renderD137").contains("vanished");
    }

    @Test
    @DisplayName("monitor.interval 0 leaves the keys absent; a bad action is one message naming the full key")
    void offAndBadInput() throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI300X, 1).installOn(FakeHost.create(temp));
        ExternalResourceInfo g = infos(amd, 1, "monitor.interval", "0").get(0);
        assertThat(g.getKeys()).noneMatch(k -> k.startsWith("health") || k.startsWith("metric."));
        assertThatThrownBy(() -> infos(amd, 1, "health.action", "quarantine"))
                .isInstanceOf(DriverConfigException.class)
                .hasMessageContaining("param.health.action: expected one of report, fail-tasks, stop-taskmanager but got 'quarantine'");
    }

    @Test
    @DisplayName("a GPU whose sysfs device folder is gone at start (what the monitor calls failed) is not offered")
    void failedAtStartNotOffered() throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI300X, 2).installOn(FakeHost.create(temp));
        amd.sys().remove("class/drm/renderD128");
        List<ExternalResourceInfo> gpus = infos(amd, 1);
        assertThat(gpus).singleElement().satisfies(g -> assertThat(g.getProperty("pci-address")).contains(FakeAmdHost.pciAddress(1)));
        assertThatThrownBy(() -> infos(amd, 2))
                .hasMessageContaining("Asked for 2 AMD GPUs")
                .hasMessageContaining("not offered because their health is failed")
                .hasMessageContaining("renderD128");
    }

    @Test
    @DisplayName("with coordination, a GPU that fails is quarantined in the host's file and no TaskManager is handed it until cleared")
    void quarantine() throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI300X, 2).installOn(FakeHost.create(temp));
        Path file = temp.resolve("amd.coordination");
        String[] kv = {"monitor.interval", "100 ms", "health.action", "report", "coordination.enabled", "true",
                "coordination.file", file.toString()};
        ExternalResourceInfo g0 = infos(amd, 1, kv).get(0);
        amd.rasErrors(0, "umc", 1, 0);
        await("quarantined", () -> io.flinkdevices.sdk.coordination.DeviceQuarantine.peek(file).size() == 1);
        io.flinkdevices.sdk.coordination.QuarantinedDevice q = io.flinkdevices.sdk.coordination.DeviceQuarantine.peek(file).get(0);
        assertThat(q.deviceId()).isEqualTo(FakeAmdHost.pciAddress(0));
        assertThat(q.reason()).contains("RAS umc uncorrectable errors 0 -> 1");
        assertThat(q.seenBy()).contains("pid " + ProcessHandle.current().pid());
        assertThat(g0.getProperty("health")).contains("failed");

        drivers.forEach(AmdGpuDriver::stopMonitor);
        // the holder is gone (its records released): another TaskManager gets only the healthy GPU
        io.flinkdevices.sdk.coordination.DeviceCoordinator.create(io.flinkdevices.sdk.coordination.CoordinationParams.of(file)).releaseAll();
        assertThat(infos(amd, 1, kv)).singleElement()
                .satisfies(g -> assertThat(g.getProperty("pci-address")).contains(FakeAmdHost.pciAddress(1)));
        assertThatThrownBy(() -> infos(amd, 2, kv)).hasMessageContaining("out of service")
                .hasMessageContaining("flink-devices quarantine clear --resource");
    }
}
