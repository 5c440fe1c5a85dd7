package io.flinkdevices.nvidia;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost.Model;
import io.flinkdevices.testkit.fake.FirstSample;
import io.flinkdevices.testkit.fake.InstalledNvidiaHost;
import io.flinkdevices.testkit.fake.NvmlStandIn;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;
import io.flinkdevices.testkit.logging.LogCapture;

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

/** The NVIDIA driver's monitor, through the stand-in NVML and the fake nvidia-smi, on hosts that change while infos are in use. */
@DisplayName("The NVIDIA driver's monitor")
@ExtendWith(StopDeviceMonitors.class)
class NvidiaMonitorTest {

    @TempDir Path temp;
    private final List<NvidiaGpuDriver> drivers = new ArrayList<>();

    @AfterEach
    void stop() {
        drivers.forEach(NvidiaGpuDriver::stopMonitor);
    }

    private List<ExternalResourceInfo> infos(Map<String, String> env, long amount, String... kv) throws Exception {
        Configuration c = new Configuration();
        for (int i = 0; i < kv.length; i += 2) {
            c.setString(kv[i], kv[i + 1]);
        }
        NvidiaGpuDriver d = (NvidiaGpuDriver) new NvidiaGpuDriverFactory(env).createExternalResourceDriver(c);
        drivers.add(d);
        return FirstSample.await(d.retrieveResourceInfo(amount));
    }

    private List<ExternalResourceInfo> viaNvml(InstalledNvidiaHost host, long amount, String... kv) throws Exception {
        Path lib = NvmlStandIn.installOn(host);
        List<String> all = new ArrayList<>(List.of("backend", "nvml", "nvml.library", lib.toString(), "monitor.interval", "100 ms"));
        all.addAll(List.of(kv));
        return infos(Map.of(), amount, all.toArray(new String[0]));
    }

    /** Waits (10 s at most: a loaded machine) until {@code condition}; the monitor samples every 100 ms. */
    private static void await(String what, Supplier<Boolean> condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.get()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(10);
        }
    }

    private static Supplier<Boolean> reads(ExternalResourceInfo info, String key, String value) {
        return () -> info.getProperty(key).equals(Optional.of(value));
    }

    @Test
    @DisplayName("reads utilisation, framebuffer, temperature, power, ECC counts and the last Xid through NVML, as they move")
    void nvmlMetrics() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 2).install(FakeHost.create(temp));
        List<ExternalResourceInfo> gpus = viaNvml(host, 2);
        ExternalResourceInfo g0 = gpus.get(0);
        assertThat(g0.getProperty("health")).contains("ok");
        assertThat(g0.getProperty("health.device")).contains(FakeNvidiaHost.gpuUuid(0));
        assertThat(g0.getKeys()).contains("metric.gpu_util", "metric.mem_copy_util", "metric.fb_used", "metric.fb_total",
                "metric.gpu_temp", "metric.power_usage", "metric.ecc_sbe_vol_total", "metric.ecc_dbe_vol_total", "metric.xid_errors");
        assertThat(g0.getProperty("metric.fb_total")).contains(Long.toString(Model.H100_SXM_80GB.memoryMib()));
        assertThat(g0.getProperty("metric.power_usage")).contains("70.5");

        host.load(0, 87, 40_000).thermals(0, 71, 612_250).singleBitEcc(0);
        await("utilisation moves", reads(g0, "metric.gpu_util", "87"));
        await("framebuffer moves", reads(g0, "metric.fb_used", "40000"));
        await("power moves", reads(g0, "metric.power_usage", "612.25"));
        await("corrected ECC counted", reads(g0, "metric.ecc_sbe_vol_total", "1"));
        assertThat(g0.getProperty("health")).as("a single-bit ECC error is corrected: no failure").contains("ok");
        assertThat(gpus.get(1).getProperty("metric.gpu_util")).as("the other GPU").contains("0");
    }

    @Test
    @DisplayName("a GPU whose clocks the hardware holds down (HW slowdown) reads degraded through NVML and nvidia-smi, is handed out after the ok ones, and reads ok once it ends")
    void hwSlowdownIsDegraded() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 3).install(FakeHost.create(temp));
        host.hwSlowdown(0, true);
        String smi = host.smi().path().toString();
        for (List<ExternalResourceInfo> two : List.of(viaNvml(host, 2),
                infos(Map.of(), 2, "backend", "nvidia-smi", "nvidia-smi.path", smi, "monitor.interval", "100 ms"))) {
            assertThat(two).extracting(i -> i.getProperty("health.device").orElseThrow())
                    .as("GPU 0, degraded, comes after every ok one").containsExactly(FakeNvidiaHost.gpuUuid(1), FakeNvidiaHost.gpuUuid(2));
            assertThat(two).extracting(i -> i.getProperty("metric.clock_throttle_reasons").orElseThrow()).containsOnly("1");
        }
        List<ExternalResourceInfo> degraded = new ArrayList<>();
        for (List<ExternalResourceInfo> all : List.of(viaNvml(host, 3),
                infos(Map.of(), 3, "backend", "nvidia-smi", "nvidia-smi.path", smi, "monitor.interval", "100 ms"))) {
            ExternalResourceInfo g0 = all.stream().filter(i -> i.getProperty("health.device").equals(Optional.of(FakeNvidiaHost.gpuUuid(0))))
                    .findFirst().orElseThrow();
            degraded.add(g0);
            assertThat(g0.getProperty("health")).as("handed out when nothing better is left, never failed").contains("degraded");
            // on a loaded machine a late sample reads degraded too ("no sample for ..."): wait for the slowdown's own reason
            await("the slowdown named", () -> g0.getProperty("health.reason").orElse("").contains("clocks held down by the hardware (clocks"
                    + "_throttle_reasons.active 0x9") || g0.getProperty("health.reason").orElse("").contains("(nvmlDeviceGetCurrentClocksThrottleReasons 0x9"));
        }
        host.hwSlowdown(0, false);
        for (ExternalResourceInfo g0 : degraded) {
            await("ok again", reads(g0, "health", "ok"));
        }
    }

    @Test
    @DisplayName("through nvidia-smi the order before hand-out comes from the listing itself: one run lists and orders, the next is the monitor's")
    void orderFromTheListing() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 3).install(FakeHost.create(temp));
        host.hwSlowdown(0, true);
        List<ExternalResourceInfo> two = infos(Map.of(), 2, "backend", "nvidia-smi", "nvidia-smi.path", host.smi().path().toString(),
                "monitor.interval", "1 h");
        assertThat(two).extracting(i -> i.getProperty("health.device").orElseThrow())
                .as("GPU 0, degraded, comes after every ok one").containsExactly(FakeNvidiaHost.gpuUuid(1), FakeNvidiaHost.gpuUuid(2));
        assertThat(host.smi().invocations()).as("nvidia-smi runs: the listing, then the monitor's first sample (its next is in an hour)")
                .containsExactly(FakeNvidiaHost.QUERY, FakeNvidiaHost.MONITOR_QUERY);
    }

    @Test
    @DisplayName("an nvidia-smi that refuses clocks_throttle_reasons.active in the listing is asked without it, once refused, with one WARN")
    void listingWithoutARefusedField() throws Exception {
        FakeHost h = FakeHost.create(temp);
        String listing = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 2).queryOutput().replaceAll(", 0x[0-9a-f]{16}\n", "\n");
        FakeExecutable smi = h.install(FakeExecutable.named("nvidia-smi")
                .whenArguments(FakeNvidiaHost.QUERY, FakeExecutable.Response.failure(2, "")
                        .withStdout("Field \"clocks_throttle_reasons.active\" is not a valid field to query.\n"))
                .whenArguments(FakeNvidiaHost.QUERY_WITHOUT_THROTTLE, FakeExecutable.Response.success(listing)));
        Configuration c = new Configuration();
        c.setString("backend", "nvidia-smi");
        c.setString("nvidia-smi.path", smi.path().toString());
        c.setString("monitor.interval", "0");
        NvidiaGpuDriver d = (NvidiaGpuDriver) new NvidiaGpuDriverFactory(Map.of()).createExternalResourceDriver(c);
        drivers.add(d);
        try (LogCapture log = LogCapture.warnings(NvidiaSmiBackend.class)) {
            assertThat(d.retrieveResourceInfo(2)).hasSize(2);
            assertThat(d.retrieveResourceInfo(1)).hasSize(1);
            assertThat(log.text()).contains("refused clocks_throttle_reasons.active").contains("listing without it from now on");
            assertThat(log.messages()).hasSize(1);
        }
        assertThat(smi.invocations()).as("the refused field once, then the listing without it")
                .containsExactly(FakeNvidiaHost.QUERY, FakeNvidiaHost.QUERY_WITHOUT_THROTTLE, FakeNvidiaHost.QUERY_WITHOUT_THROTTLE);
    }

    @Test
    @DisplayName("nvidia-smi clock throttle reasons that are no bitmask (12, 0xZZ, over 32 bits) are failed samples, never a degraded GPU")
    void garbageThrottleReasons() throws Exception {
        for (String garbage : List.of("12", "0xZZ", "0x1FFFFFFFFF")) {
            String line = FakeNvidiaHost.gpuUuid(0) + ", 0, 0, 1024, 81559, 35, 90.50, 0, 0, " + garbage + "\n";
            assertThatThrownBy(() -> SmiSampler.parse(line, "nvidia-smi"))
                    .hasMessageStartingWith("nvidia-smi: clocks_throttle_reasons.active of GPU " + FakeNvidiaHost.gpuUuid(0) + " is '" + garbage + "'")
                    .hasMessageContaining("expected a bitmask from 0x0 to 0xFFFFFFFF");
        }
    }

    @Test
    @DisplayName("critical Xid 79 fails its GPU and names it; application Xid 13 does not; the other GPU stays ok")
    void xids() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 2).install(FakeHost.create(temp));
        List<ExternalResourceInfo> gpus = viaNvml(host, 2);
        ExternalResourceInfo g0 = gpus.get(0);
        ExternalResourceInfo g1 = gpus.get(1);

        host.xid(0, 13).load(0, 55, 10);
        await("Xid 13 seen", reads(g0, "metric.xid_errors", "13"));
        assertThat(g0.getProperty("health")).as("Xid 13 is the job's fault").contains("ok");

        host.xid(0, 79);
        await("Xid 79 fails GPU 0", reads(g0, "health", "failed"));
        assertThat(g0.getProperty("health.reason").orElse("")).startsWith("Xid 79 (GPU has fallen off the bus) at ");
        assertThat(g0.getProperty("metric.xid_errors")).contains("79");
        assertThat(g1.getProperty("health")).contains("ok");
    }

    @Test
    @DisplayName("NVML answering a temperature of -5 (4294967291 unsigned), a utilisation of 250 % or a critical-Xid event with Xid -1: failed samples, never a metric or a failed GPU")
    void garbageNumbersThroughNvml() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 1).install(FakeHost.create(temp));
        ExternalResourceInfo g0 = viaNvml(host, 1).get(0);
        String gpu = "GPU " + FakeNvidiaHost.gpuUuid(0);

        host.thermals(0, -5, 90_000);
        await("degraded by the temperature", () -> g0.getProperty("health").equals(Optional.of("degraded"))
                && g0.getProperty("health.reason").orElse("").contains("NVML: nvmlDeviceGetTemperature of " + gpu
                        + " is '4294967291'; expected a number from 0 to 200 °C"));
        assertThat(Double.parseDouble(g0.getProperty("metric.gpu_temp").orElseThrow())).isBetween(0.0, 200.0);
        host.thermals(0, 40, 90_000);
        await("ok again", reads(g0, "health", "ok"));

        host.load(0, 250, 10);
        await("degraded by the utilisation", () -> g0.getProperty("health").equals(Optional.of("degraded"))
                && g0.getProperty("health.reason").orElse("").contains("nvmlDeviceGetUtilizationRates gpu of " + gpu + " is '250'"));
        host.load(0, 50, 10);
        await("ok again", reads(g0, "metric.gpu_util", "50"));

        long errors = Long.parseLong(g0.getProperty("metric.monitor.errors").orElseThrow());
        host.xid(0, -1);
        await("the garbage event is a failed sample", () -> Long.parseLong(g0.getProperty("metric.monitor.errors").orElseThrow()) > errors);
        long samples = Long.parseLong(g0.getProperty("metric.monitor.samples").orElseThrow());
        await("two more samples", () -> Long.parseLong(g0.getProperty("metric.monitor.samples").orElseThrow()) >= samples + 2);
        assertThat(g0.getProperty("health")).as("Xid -1 fails nothing").contains("ok");
        assertThat(g0.getProperty("metric.xid_errors")).contains("0");

        host.xid(0, 79);
        await("a real Xid after it still fails the GPU", reads(g0, "health", "failed"));
    }

    @Test
    @DisplayName("NVML delivering an event whose type and data are all ones: a failed sample, the GPU stays ok (it read Xid -1, failed, before)")
    void allOnesEventThroughNvml() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 1).install(FakeHost.create(temp));
        ExternalResourceInfo g0 = viaNvml(host, 1).get(0);
        await("sampled", reads(g0, "health", "ok"));
        // an event whose type and data are all ones, as a library that lies writes it
        long before = Long.parseLong(g0.getProperty("metric.monitor.errors").orElseThrow());
        java.nio.file.Files.writeString(host.nvmlState(), "event\t100000\t0\t18446744073709551615\t18446744073709551615\t4294967295\t4294967295\n",
                java.nio.file.StandardOpenOption.APPEND);
        await("the all-ones event is a failed sample", () -> Long.parseLong(g0.getProperty("metric.monitor.errors").orElseThrow()) > before);
        long after = Long.parseLong(g0.getProperty("metric.monitor.samples").orElseThrow());
        await("two more samples", () -> Long.parseLong(g0.getProperty("metric.monitor.samples").orElseThrow()) >= after + 2);
        assertThat(g0.getProperty("health")).as("an all-ones event fails nothing (it read Xid -1 before)").contains("ok");

    }

    @Test
    @DisplayName("an NVML event with all-ones type and data, several types at once or an Xid outside 1 to 99999 is garbage; registered events are not")
    void garbageEvents() {
        assertThat(NvmlSampler.garbage(new NvmlEvent(null, -1L, -1L, -1, -1)))
                .isEqualTo("an event of type 0xffffffffffffffff (data 18446744073709551615); expected one of the types registered:"
                        + " critical Xid (0x8), double-bit ECC (0x2), single-bit ECC (0x1)");
        assertThat(NvmlSampler.garbage(new NvmlEvent(null, 0xAL, 79, -1, -1))).startsWith("an event of type 0xa");
        assertThat(NvmlSampler.garbage(new NvmlEvent(null, 0x8L, 0, -1, -1))).isEqualTo("a critical-Xid event with Xid 0; expected an Xid from 1 to 99999");
        assertThat(NvmlSampler.garbage(new NvmlEvent(null, 0x8L, 79, -1, -1))).isNull();
        assertThat(NvmlSampler.garbage(new NvmlEvent(null, 0x2L, 0, -1, -1))).isNull();
    }

    @Test
    @DisplayName("health.ignored-xids: all makes Xid 79 harmless; a double-bit ECC event still fails the GPU")
    void ignoredXids() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 1).install(FakeHost.create(temp));
        ExternalResourceInfo g0 = viaNvml(host, 1, "health.ignored-xids", "all").get(0);
        host.xid(0, 79);
        await("Xid 79 seen", reads(g0, "metric.xid_errors", "79"));
        assertThat(g0.getProperty("health")).contains("ok");
        host.doubleBitEcc(0);
        await("double-bit ECC fails the GPU", reads(g0, "health", "failed"));
        assertThat(g0.getProperty("health.reason").orElse("")).startsWith("double-bit ECC error at ");
        assertThat(g0.getProperty("metric.ecc_dbe_vol_total")).contains("1");
    }

    @Test
    @DisplayName("an Xid of one MIG instance fails that MIG unit only; its sibling on the same GPU stays ok")
    void migIsolation() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpu(Model.A100_SXM_80GB, "1g.10gb", "1g.10gb").install(FakeHost.create(temp));
        List<ExternalResourceInfo> units = viaNvml(host, 2, "mig", "true", "mig.profile", "1g.10gb");
        ExternalResourceInfo u0 = units.get(0);
        ExternalResourceInfo u1 = units.get(1);
        assertThat(u0.getProperty("uuid")).contains(FakeNvidiaHost.migUuid(0, 0));
        assertThat(u0.getProperty("metric.fb_total")).as("a MIG unit's own framebuffer").contains("10000");

        host.migXid(0, 0, 94);
        await("MIG unit 0 fails", reads(u0, "health", "failed"));
        assertThat(u0.getProperty("health.reason").orElse(""))
                .startsWith("Xid 94 (contained ECC error) at ").endsWith("(GPU instance 1, compute instance 0)");
        host.load(0, 33, 10);
        await("a later sample", reads(u1, "metric.gpu_util", "33"));
        assertThat(u1.getProperty("health")).as("the other MIG unit").contains("ok");

        host.xid(0, 79);
        await("a whole-GPU Xid fails every unit", reads(u1, "health", "failed"));
    }

    @Test
    @DisplayName("a GPU that falls off the bus is failed, through NVML and through nvidia-smi")
    void gpuRemoved() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 2).install(FakeHost.create(temp));
        List<ExternalResourceInfo> nvml = viaNvml(host, 2);
        List<ExternalResourceInfo> smi = infos(Map.of(), 2, "backend", "nvidia-smi", "nvidia-smi.path", host.smi().path().toString(),
                "monitor.interval", "100 ms");
        host.removeGpu(1);
        await("NVML: GPU 1 failed", reads(nvml.get(1), "health", "failed"));
        assertThat(nvml.get(1).getProperty("health.reason").orElse("")).contains("is lost (NVML: GPU is lost)");
        await("nvidia-smi: GPU 1 failed", reads(smi.get(1), "health", "failed"));
        assertThat(smi.get(1).getProperty("health.reason").orElse("")).contains("is no longer listed by nvidia-smi");
        assertThat(nvml.get(0).getProperty("health")).contains("ok");
        assertThat(smi.get(0).getProperty("health")).contains("ok");
    }

    @Test
    @DisplayName("without libnvidia-ml: one WARN, then one nvidia-smi query per interval for all GPUs, none per key read")
    void nvidiaSmiSampler() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 3).install(FakeHost.create(temp));
        List<ExternalResourceInfo> gpus;
        try (LogCapture warnings = LogCapture.warnings(AutoBackend.class)) {
            gpus = infos(Map.of(), 3, "nvidia-smi.path", host.smi().path().toString(), "monitor.interval", "100 ms");
            assertThat(warnings.messages()).as("the log of a host without libnvidia-ml.so.1").hasSize(1);
            // the linker's reason here; where an earlier test of this JVM loaded the stand-in, NVML's
            assertThat(warnings.text()).startsWith("WARN backend nvml (libnvidia-ml.so.1) did not work: ")
                    .containsAnyOf("native library libnvidia-ml.so.1", "refused to start");
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(
                ((AutoBackend) drivers.get(0).backend()).chosen() instanceof NvidiaSmiBackend, "this host has libnvidia-ml.so.1");
        ExternalResourceInfo g2 = gpus.get(2);
        assertThat(g2.getKeys()).contains("metric.gpu_util", "metric.fb_used", "metric.fb_total", "metric.gpu_temp",
                "metric.power_usage", "metric.ecc_sbe_vol_total", "metric.ecc_dbe_vol_total");
        host.load(2, 64, 2048);
        await("metrics move through nvidia-smi", reads(g2, "metric.gpu_util", "64"));
        assertThat(g2.getProperty("metric.fb_used")).contains("2048");

        drivers.get(0).monitor().stop();
        long before = host.monitorQueries();
        for (int round = 0; round < 1000; round++) {
            for (ExternalResourceInfo g : gpus) {
                g.getKeys().forEach(g::getProperty);
            }
        }
        assertThat(host.monitorQueries()).as("nvidia-smi runs for 1000 reads of every key").isEqualTo(before);
        assertThat(host.smi().invocations()).as("one query per interval for all 3 GPUs, never one per GPU")
                .filteredOn(FakeNvidiaHost.MONITOR_QUERY::equals).hasSizeGreaterThanOrEqualTo(2)
                .hasSizeLessThanOrEqualTo((int) before);
    }

    @Test
    @DisplayName("nvidia-smi printing garbage is a failed sample counted in monitor.errors, not a health change")
    void garbageIsAFailedSample() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 1).install(FakeHost.create(temp));
        ExternalResourceInfo g0 = infos(Map.of(), 1, "backend", "nvidia-smi", "nvidia-smi.path", host.smi().path().toString(),
                "monitor.interval", "100 ms", "health.action", "report").get(0);
        host.smi().respondWith(io.flinkdevices.testkit.fake.FakeExecutable.Response.success("GPU-??, lots, of, noise\n"));
        await("a failed sample is counted", () -> g0.getProperty("metric.monitor.errors").map(v -> !v.equals("0")).orElse(false));
        assertThat(g0.getProperty("health")).as("one bad sample does not fail the GPU").isNotEqualTo(Optional.of("failed"));
    }

    /** One line of the monitor's nvidia-smi query for GPU 0, with {@code temperature} and {@code dbe} as given. */
    private static String sampleLine(String utilization, String temperature, String dbe) {
        return FakeNvidiaHost.gpuUuid(0) + ", " + utilization + ", 0, 1024, 81559, " + temperature + ", 90.50, 0, " + dbe + ", 0x0000000000000001\n";
    }

    @Test
    @DisplayName("nvidia-smi answering NaN, -5, 1e308, Infinity or 18446744073709551615: failed samples, degraded after three, never a metric; a garbage ECC count never retires the GPU, a real rise after it still does")
    void garbageNumbersThroughNvidiaSmi() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 1).install(FakeHost.create(temp));
        ExternalResourceInfo g0 = infos(Map.of(), 1, "backend", "nvidia-smi", "nvidia-smi.path", host.smi().path().toString(),
                "monitor.interval", "100 ms", "health.action", "report").get(0);
        await("the GPU is sampled", reads(g0, "health", "ok"));
        String[][] cases = {
            {sampleLine("0", "NaN", "0"), "temperature.gpu of GPU " + FakeNvidiaHost.gpuUuid(0) + " is 'NaN'; expected a number from 0 to 200 °C"},
            {sampleLine("0", "-5", "0"), "temperature.gpu of GPU " + FakeNvidiaHost.gpuUuid(0) + " is '-5'"},
            {sampleLine("0", "1e308", "0"), "temperature.gpu of GPU " + FakeNvidiaHost.gpuUuid(0) + " is '1e308'"},
            {sampleLine("Infinity", "35", "0"), "utilization.gpu of GPU " + FakeNvidiaHost.gpuUuid(0) + " is 'Infinity'; expected a number from 0 to 100 %"},
            {sampleLine("0", "35", "18446744073709551615"), "ecc.errors.uncorrected.volatile.total of GPU " + FakeNvidiaHost.gpuUuid(0)
                    + " is '18446744073709551615'; expected a whole number from 0 to 9223372036854775807"},
            {sampleLine("0", "35", "-5"), "ecc.errors.uncorrected.volatile.total of GPU " + FakeNvidiaHost.gpuUuid(0) + " is '-5'"},
            {sampleLine("0", "[Unknown Error]", "0"), "temperature.gpu of GPU " + FakeNvidiaHost.gpuUuid(0) + " is '[Unknown Error]'"},
        };
        for (String[] c : cases) {
            host.smi().respondWith(FakeExecutable.Response.success(c[0]));
            await("degraded by " + c[0].strip(), () -> g0.getProperty("health").equals(Optional.of("degraded"))
                    && g0.getProperty("health.reason").orElse("").contains(c[1]));
            assertThat(g0.getProperty("metric.gpu_temp")).as("never the garbage as a metric").isNotEqualTo(Optional.of("NaN"));
            assertThat(Double.parseDouble(g0.getProperty("metric.gpu_temp").orElse("0"))).isBetween(0.0, 200.0);
            assertThat(g0.getProperty("metric.ecc_dbe_vol_total")).contains("0");
            host.smi().respondWith(FakeExecutable.Response.success(sampleLine("0", "35", "0")));
            await("ok again", reads(g0, "health", "ok"));
        }
        host.smi().respondWith(FakeExecutable.Response.success(sampleLine("0", "35", "1")));
        await("a real rise of the uncorrected count still fails the GPU", reads(g0, "health", "failed"));
        assertThat(g0.getProperty("health.reason").orElse("")).startsWith("uncorrected ECC errors: the volatile count rose from 0 to 1");
    }

    @Test
    @DisplayName("nvidia-smi: an uncorrected ECC count that rises fails that GPU for good; corrected errors and a count the GPU already had do not")
    void uncorrectedEccThroughNvidiaSmi() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 2).install(FakeHost.create(temp));
        host.doubleBitEcc(1); // before the TaskManager started: the GPU was handed out with it
        List<ExternalResourceInfo> gpus = infos(Map.of(), 2, "backend", "nvidia-smi", "nvidia-smi.path", host.smi().path().toString(),
                "monitor.interval", "100 ms", "health.action", "report");
        ExternalResourceInfo g0 = gpus.get(0);
        ExternalResourceInfo g1 = gpus.get(1);
        await("both sampled", () -> g0.getProperty("health").isPresent() && g1.getProperty("health").isPresent());
        host.singleBitEcc(0);
        await("corrected ECC counted", reads(g0, "metric.ecc_sbe_vol_total", "1"));
        assertThat(g0.getProperty("health")).as("corrected: no failure").contains("ok");
        assertThat(g1.getProperty("health")).as("a count the GPU already had when handed out").contains("ok");

        host.doubleBitEcc(0);
        await("uncorrected ECC fails GPU 0", reads(g0, "health", "failed"));
        assertThat(g0.getProperty("health.reason").orElse(""))
                .startsWith("uncorrected ECC errors: the volatile count rose from 0 to 1 (nvidia-smi) at ")
                .matches(".* at \\d\\d:\\d\\d:\\d\\d");
        assertThat(g1.getProperty("health")).contains("ok");
        long samples = Long.parseLong(g0.getProperty("metric.monitor.samples").orElseThrow());
        await("two more samples", () -> Long.parseLong(g0.getProperty("metric.monitor.samples").orElseThrow()) >= samples + 2);
        assertThat(g0.getProperty("health")).as("failed for good, as NVML's double-bit ECC event").contains("failed");
    }

    @Test
    @DisplayName("nvidia-smi finding no GPU at all (the host's last GPU fell off the bus) fails that GPU")
    void lastGpuGone() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 1).install(FakeHost.create(temp));
        ExternalResourceInfo g0 = infos(Map.of(), 1, "backend", "nvidia-smi", "nvidia-smi.path", host.smi().path().toString(),
                "monitor.interval", "100 ms", "health.action", "report").get(0);
        await("the GPU is sampled", () -> g0.getProperty("health").equals(Optional.of("ok")));
        // the fake nvidia-smi then answers as the real one: "No devices were found", exit code 6
        host.removeGpu(0);
        await("the GPU reads failed", () -> g0.getProperty("health").equals(Optional.of("failed")));
        assertThat(g0.getProperty("health.reason")).hasValueSatisfying(r -> assertThat(r).contains("no longer listed by nvidia-smi"));
        assertThat(g0.getProperty("metric.monitor.errors")).as("finding no GPU is what nvidia-smi saw, not a failed sample").hasValue("0");
    }
}
