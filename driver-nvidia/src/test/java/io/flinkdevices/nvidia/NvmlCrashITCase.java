package io.flinkdevices.nvidia;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost.Model;
import io.flinkdevices.testkit.fake.InstalledNvidiaHost;
import io.flinkdevices.testkit.fake.InstalledNvidiaHost.NvmlCrash;
import io.flinkdevices.testkit.fake.NvmlStandIn;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;
import io.flinkdevices.testkit.logging.LogCapture;

import org.apache.flink.configuration.Configuration;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A {@code libnvidia-ml.so.1} that crashes the process calling it ({@link
 * InstalledNvidiaHost#nvmlCrashes}: SIGSEGV, abort() or exit() in {@code nvmlInit_v2}, a pointer to
 * nowhere from {@code nvmlErrorString}, SIGSEGV or abort() in a monitor sample's call) never reaches
 * this JVM, which plays the TaskManager: the library is proved in a child JVM first ({@link
 * NvmlProbe}), backend {@code nvml} fails with how the child ended and where, and {@code auto} finds
 * the GPUs through nvidia-smi with one WARN. Had the library been called here, this JVM would have
 * died and the run would report a crashed fork instead of these results.
 */
@DisplayName("The NVIDIA driver with an NVML library that crashes")
@ExtendWith(StopDeviceMonitors.class)
class NvmlCrashITCase {

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

    /** How the child ends and in which call, as the message says it. */
    private static String[] expected(NvmlCrash crash) {
        switch (crash) {
            case INIT_SEGV:
                return new String[] {"died of SIGSEGV", "inside nvmlInit_v2"};
            case INIT_ABORT:
                return new String[] {"died of SIGABRT", "inside nvmlInit_v2"};
            case INIT_EXIT:
                return new String[] {"exited with code 3", "inside nvmlInit_v2"};
            case ERROR_STRING_BAD_POINTER:
                return new String[] {"died of SIGSEGV", "inside nvmlErrorString(0)"};
            case SAMPLE_SEGV:
                return new String[] {"died of SIGSEGV", "inside nvmlDeviceGetUtilizationRates"};
            case SAMPLE_ABORT:
                return new String[] {"died of SIGABRT", "inside nvmlDeviceGetUtilizationRates"};
            default:
                throw new IllegalArgumentException(crash.name());
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(NvmlCrash.class)
    @DisplayName("nvml fails naming the library and how the child ended, auto falls back to nvidia-smi with one WARN,"
            + " and the library is not proved again")
    void crashStaysInTheChild(NvmlCrash crash) throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 2).install(FakeHost.create(temp));
        String lib = NvmlStandIn.installOn(host).toString();
        String smi = host.smi().path().toString();
        host.nvmlCrashes(crash);
        int children = NvmlProbe.children();

        assertThatThrownBy(() -> retrieve(2, "backend", "nvml", "nvml.library", lib, "monitor.interval", "0"))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessageContaining("NVML (" + lib + ") is not used: the child JVM that called it as this driver does ")
                .hasMessageContaining(expected(crash)[0])
                .hasMessageContaining(expected(crash)[1])
                .hasMessageContaining("it would have ended the TaskManager")
                .hasMessageContaining("param.nvml.library");
        assertThat(NvmlProbe.children()).as("one child JVM proved the library").isEqualTo(children + 1);

        List<GpuInfo> viaAuto;
        try (LogCapture warnings = LogCapture.warnings(AutoBackend.class)) {
            viaAuto = retrieve(2, "nvml.library", lib, "nvidia-smi.path", smi, "monitor.interval", "0");
            assertThat(warnings.messages()).as("one WARN: %s", warnings.text()).hasSize(1);
            assertThat(warnings.text()).startsWith("WARN backend nvml (" + lib).contains(expected(crash)[0], expected(crash)[1]);
        }
        assertThat(viaAuto).extracting(g -> g.getUuid().orElse(null)).as("the GPUs through nvidia-smi")
                .containsExactly(FakeNvidiaHost.gpuUuid(0), FakeNvidiaHost.gpuUuid(1));
        assertThat(NvmlProbe.children()).as("the verdict is kept for the library file").isEqualTo(children + 1);
    }

    @Test
    @DisplayName("a sound library is proved once: later discoveries and the monitor start no child")
    void soundLibraryProvedOnce() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 2).install(FakeHost.create(temp));
        String lib = NvmlStandIn.installOn(host).toString();
        int children = NvmlProbe.children();

        assertThat(retrieve(2, "backend", "nvml", "nvml.library", lib, "monitor.interval", "100 ms")).hasSize(2);
        assertThat(retrieve(1, "backend", "nvml", "nvml.library", lib, "monitor.interval", "0")).hasSize(1);
        assertThat(NvmlProbe.children()).as("one child for two discoveries and a monitor").isEqualTo(children + 1);
    }

    @Test
    @DisplayName("a refused library is not proved again until its file changes: then it is, and used")
    void replacedLibraryProvedAgain() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 2).install(FakeHost.create(temp));
        String lib = NvmlStandIn.installOn(host).toString();
        host.nvmlCrashes(NvmlCrash.INIT_ABORT);
        int children = NvmlProbe.children();
        for (int i = 0; i < 2; i++) {
            assertThatThrownBy(() -> retrieve(2, "backend", "nvml", "nvml.library", lib, "monitor.interval", "0"))
                    .hasMessageContaining("died of SIGABRT inside nvmlInit_v2");
        }
        assertThat(NvmlProbe.children()).as("the verdict is kept for the file").isEqualTo(children + 1);

        host.nvmlCrashes(null);
        assertThatThrownBy(() -> retrieve(2, "backend", "nvml", "nvml.library", lib, "monitor.interval", "0"))
                .as("the same file: the same verdict, however the host changed").hasMessageContaining("died of SIGABRT");
        Files.setLastModifiedTime(Path.of(lib), FileTime.fromMillis(System.currentTimeMillis() - Duration.ofHours(1).toMillis()));
        assertThat(retrieve(2, "backend", "nvml", "nvml.library", lib, "monitor.interval", "0"))
                .as("the file changed (an operator replaced it): proved again, and used").hasSize(2);
        assertThat(NvmlProbe.children()).isEqualTo(children + 2);
    }

    @Test
    @DisplayName("auto on a host without libnvidia-ml.so.1 starts no child: the TaskManager's start costs what it did")
    void noLibraryNoChild() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(NvmlProbe.linkerMayFind(Nvml.DEFAULT_LIBRARY), "this host has libnvidia-ml.so.1");
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 2).install(FakeHost.create(temp));
        int children = NvmlProbe.children();
        assertThat(retrieve(2, "nvidia-smi.path", host.smi().path().toString(), "monitor.interval", "0")).hasSize(2);
        assertThat(NvmlProbe.children()).isEqualTo(children);
    }
}
