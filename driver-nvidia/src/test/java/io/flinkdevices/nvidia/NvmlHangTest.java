package io.flinkdevices.nvidia;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost.Model;
import io.flinkdevices.testkit.fake.InstalledNvidiaHost;
import io.flinkdevices.testkit.fake.NvmlStandIn;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import org.apache.flink.configuration.Configuration;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * NVML that does not answer, as a GPU whose driver is stuck leaves it: the stand-in's calls block
 * ({@link InstalledNvidiaHost#nvmlHangs}). A discovery never waits on NVML longer than the driver's
 * {@code timeout}, and a TaskManager with backend {@code auto} still gets its GPUs, through
 * nvidia-smi.
 */
@DisplayName("The NVIDIA driver with NVML that does not answer")
@ExtendWith(StopDeviceMonitors.class)
class NvmlHangTest {

    @TempDir Path temp;

    private static List<GpuInfo> retrieve(long amount, String... kv) throws Exception {
        Configuration c = new Configuration();
        for (int i = 0; i < kv.length; i += 2) {
            c.setString(kv[i], kv[i + 1]);
        }
        NvidiaGpuDriver d = (NvidiaGpuDriver) new NvidiaGpuDriverFactory(Map.of()).createExternalResourceDriver(c);
        try {
            return new ArrayList<>(d.retrieveResourceInfo(amount));
        } finally {
            d.stopMonitor();
        }
    }

    @Test
    @DisplayName("fails discovery naming the timeout key within it, refuses the next at once, hands out the GPUs through"
            + " nvidia-smi under auto, and uses NVML again once it answers")
    void nvmlThatDoesNotAnswer() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 2).install(FakeHost.create(temp));
        String lib = NvmlStandIn.installOn(host).toString();
        String smi = host.smi().path().toString();
        host.nvmlHangs(true);
        try {
            long start = System.nanoTime();
            assertThatThrownBy(() -> retrieve(2, "backend", "nvml", "nvml.library", lib, "timeout", "300 ms"))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("timeout: " + lib + " (NVIDIA management library, through JNA) did not return from"
                            + " discovery (nvmlInit_v2 and the GPU queries) within 300 ms; the call is left running");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("bounded by the timeout, not by NVML")
                    .isLessThan(Duration.ofSeconds(8));

            long refused = System.nanoTime();
            assertThatThrownBy(() -> retrieve(2, "backend", "nvml", "nvml.library", lib, "timeout", "10 s"))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining(lib + " (NVIDIA management library, through JNA) has not returned from discovery"
                            + " (nvmlInit_v2 and the GPU queries), called at ");
            assertThat(Duration.ofNanos(System.nanoTime() - refused)).as("refused at once, not another 10 s")
                    .isLessThan(Duration.ofSeconds(5));

            List<GpuInfo> viaAuto = retrieve(2, "nvml.library", lib, "nvidia-smi.path", smi, "timeout", "10 s",
                    "monitor.interval", "1 s");
            assertThat(viaAuto).extracting(g -> g.getUuid().orElse(null))
                    .as("auto: NVML refused at once, the GPUs through nvidia-smi")
                    .containsExactly(FakeNvidiaHost.gpuUuid(0), FakeNvidiaHost.gpuUuid(1));
        } finally {
            host.nvmlHangs(false);
        }

        List<GpuInfo> again = onceNvmlAnswers(() -> retrieve(2, "backend", "nvml", "nvml.library", lib, "timeout", "10 s",
                "monitor.interval", "0"));
        assertThat(again).extracting(g -> g.getUuid().orElse(null)).as("NVML answers again")
                .containsExactly(FakeNvidiaHost.gpuUuid(0), FakeNvidiaHost.gpuUuid(1));
    }

    @Test
    @DisplayName("a monitor sample NVML stops answering fails within the timeout: counted in monitor.errors, the GPUs"
            + " degraded after three in a row, the monitor stops at once, and samples come back once NVML answers")
    void monitorSampleThatDoesNotAnswer() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 1).install(FakeHost.create(temp));
        String lib = NvmlStandIn.installOn(host).toString();
        Configuration c = new Configuration();
        c.setString("backend", "nvml");
        c.setString("nvml.library", lib);
        c.setString("timeout", "300 ms");
        c.setString("monitor.interval", "100 ms");
        NvidiaGpuDriver d = (NvidiaGpuDriver) new NvidiaGpuDriverFactory(Map.of()).createExternalResourceDriver(c);
        try {
            // on a loaded machine the first discovery (loading the library) may take longer than the
            // 300 ms this case needs for its samples; it is asked again once NVML has answered
            GpuInfo gpu = onceNvmlAnswers(true, () -> d.retrieveResourceInfo(1).iterator().next());
            awaitHealth(gpu, "ok");
            host.nvmlHangs(true);
            awaitHealth(gpu, "degraded");
            // at first the read may say the sample is late; then the failed samples are counted
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!gpu.getProperty("health.reason").orElse("").contains("samples in a row failed")
                    && System.nanoTime() < until) {
                Thread.sleep(20);
            }
            assertThat(gpu.getProperty("health")).contains("degraded");
            assertThat(gpu.getProperty("health.reason").orElseThrow())
                    .contains("samples in a row failed")
                    .contains("(NVIDIA management library, through JNA) has not returned from a monitor sample")
                    .contains("timeout: 300 ms");
            assertThat(Long.parseLong(gpu.getProperty("metric.monitor.errors").orElseThrow())).isGreaterThanOrEqualTo(3);
            long stop = System.nanoTime();
            d.stopMonitor();
            assertThat(Duration.ofNanos(System.nanoTime() - stop)).as("the monitor thread is not stuck in NVML")
                    .isLessThan(Duration.ofSeconds(4));
        } finally {
            host.nvmlHangs(false);
        }
        NvidiaGpuDriver again = (NvidiaGpuDriver) new NvidiaGpuDriverFactory(Map.of()).createExternalResourceDriver(c);
        try {
            GpuInfo gpu = onceNvmlAnswers(() -> again.retrieveResourceInfo(1).iterator().next());
            awaitHealth(gpu, "ok");
            assertThat(gpu.getProperty("metric.gpu_temp")).as("samples again").isPresent();
        } finally {
            again.stopMonitor();
        }
    }

    private interface Discovery<T> {
        T run() throws Exception;
    }

    /**
     * {@code discovery} once the call left running in NVML has returned: until then (at most 10 s)
     * the deadline refuses at once, saying it "has not returned".
     */
    private static <T> T onceNvmlAnswers(Discovery<T> discovery) throws Exception {
        return onceNvmlAnswers(false, discovery);
    }

    /**
     * As {@link #onceNvmlAnswers(Discovery)}; with {@code slowStart}, also past a first discovery that
     * took longer than the timeout (loading the library on a loaded machine) and is still running.
     */
    private static <T> T onceNvmlAnswers(boolean slowStart, Discovery<T> discovery) throws Exception {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                return discovery.run();
            } catch (DeviceDriverException e) {
                boolean running = e.getMessage().contains("has not returned")
                        || (slowStart && e.getMessage().contains("did not return from discovery"));
                if (System.nanoTime() > until || !running) {
                    throw e;
                }
                Thread.sleep(20);
            }
        }
    }

    private static void awaitHealth(GpuInfo gpu, String health) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!gpu.getProperty("health").equals(java.util.Optional.of(health))) {
            if (System.nanoTime() > until) {
                throw new AssertionError("health not " + health + " within 10 s: " + gpu.getProperty("health")
                        + " (" + gpu.getProperty("health.reason").orElse("") + ")");
            }
            Thread.sleep(20);
        }
    }
}
