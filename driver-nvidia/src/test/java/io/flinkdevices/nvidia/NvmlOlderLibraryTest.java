package io.flinkdevices.nvidia;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost.Model;
import io.flinkdevices.testkit.fake.FirstSample;
import io.flinkdevices.testkit.fake.InstalledNvidiaHost;
import io.flinkdevices.testkit.fake.NvmlStandIn;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import com.sun.jna.NativeLibrary;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * NVML of an older driver, which lacks functions the driver binds: the testkit's stand-in built
 * without {@code nvmlDeviceGetMemoryInfo_v2} (before R510) and without the MIG functions. A call of
 * a function the library lacks answers "lacking" (never JNA's {@code UnsatisfiedLinkError}), and
 * the driver falls back where NVML itself would have said "not supported".
 */
@DisplayName("NVML of an older driver, without nvmlDeviceGetMemoryInfo_v2 and the MIG functions")
@ExtendWith(StopDeviceMonitors.class)
class NvmlOlderLibraryTest {

    @TempDir Path temp;
    private final List<NvidiaGpuDriver> drivers = new ArrayList<>();

    /** The stand-in's source from the testkit, built with {@code flags} in place of the host's library. */
    private static Path installOlder(InstalledNvidiaHost host, String... flags) throws Exception {
        Optional<String> why = NvmlStandIn.unavailable();
        if (why.isPresent()) {
            System.out.println("Skipped: " + why.get());
            Assumptions.abort(why.get());
        }
        Path source = host.nvmlLibrary().resolveSibling("nvml-standin.c");
        Files.createDirectories(source.getParent());
        try (InputStream in = NvmlStandIn.class.getResourceAsStream("nvml-standin.c")) {
            Files.copy(in, source);
        }
        List<String> cc = new ArrayList<>(List.of("cc", "-shared", "-fPIC", "-O1"));
        cc.addAll(List.of(flags));
        cc.addAll(List.of("-o", host.nvmlLibrary().toString(), source.toString(), "-lpthread"));
        Process p = new ProcessBuilder(cc).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("cc within 60 s").isTrue();
        assertThat(p.exitValue()).as("cc " + String.join(" ", flags) + ": " + out).isZero();
        return host.nvmlLibrary();
    }

    private List<ExternalResourceInfo> infos(long amount, String... kv) throws Exception {
        Configuration c = new Configuration();
        for (int i = 0; i < kv.length; i += 2) {
            c.setString(kv[i], kv[i + 1]);
        }
        NvidiaGpuDriver d = (NvidiaGpuDriver) new NvidiaGpuDriverFactory(Map.of()).createExternalResourceDriver(c);
        drivers.add(d);
        return new ArrayList<>(FirstSample.await(d.retrieveResourceInfo(amount)));
    }

    private static Map<String, String> fixedKeys(ExternalResourceInfo info) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String k : info.getKeys()) {
            if (!k.startsWith("health") && !k.startsWith("metric.")) {
                out.put(k, info.getProperty(k).orElse(null));
            }
        }
        return out;
    }

    @Test
    @DisplayName("hands out the same GPUs as nvidia-smi (an A100 as a whole GPU) and samples the framebuffer through nvmlDeviceGetMemoryInfo")
    void olderDriverDiscoversAndSamples() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 2).gpu(Model.A100_SXM_80GB)
                .install(FakeHost.create(temp));
        Path lib = installOlder(host, "-DNVML_STANDIN_BEFORE_R510", "-DNVML_STANDIN_WITHOUT_MIG");
        NativeLibrary older = NativeLibrary.getInstance(lib.toString());
        for (String lacking : List.of("nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetMigMode", "nvmlDeviceGetMigDeviceHandleByIndex")) {
            assertThatThrownBy(() -> older.getFunction(lacking)).as("the library built lacks " + lacking)
                    .isInstanceOf(UnsatisfiedLinkError.class);
        }
        host.load(0, 12, 30_000);
        try {
            List<ExternalResourceInfo> byNvml = infos(3, "backend", "nvml", "nvml.library", lib.toString(), "monitor.interval", "100 ms");
            List<ExternalResourceInfo> bySmi = infos(3, "backend", "nvidia-smi", "nvidia-smi.path", host.smi().path().toString(),
                    "monitor.interval", "0");
            assertThat(byNvml).hasSize(3);
            for (int i = 0; i < 3; i++) {
                assertThat(fixedKeys(byNvml.get(i))).as("GPU " + i + " through the older NVML").isEqualTo(fixedKeys(bySmi.get(i)));
            }
            ExternalResourceInfo g0 = byNvml.get(0);
            assertThat(g0.getProperty("health")).contains("ok");
            assertThat(g0.getProperty("metric.fb_total")).contains(Long.toString(Model.H100_SXM_80GB.memoryMib()));
            assertThat(g0.getProperty("metric.fb_used")).as("used framebuffer through nvmlDeviceGetMemoryInfo").contains("30000");
            assertThat(byNvml.get(2).getProperty("partition")).as("the A100 without MIG functions: a whole GPU").isEmpty();
        } finally {
            drivers.forEach(NvidiaGpuDriver::stopMonitor);
        }
    }

    @Test
    @DisplayName("a library without nvmlInit_v2 is one DeviceDriverException naming it, not an UnsatisfiedLinkError")
    void libraryWithoutNvml() {
        assertThatThrownBy(() -> Nvml.open("libc.so.6"))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessage("libc.so.6 loaded but lacks nvmlInit_v2; expected NVIDIA's management library libnvidia-ml.so.1"
                        + " of a driver from R450 on");
    }
}
