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
import io.flinkdevices.testkit.logging.LogCapture;

import org.apache.flink.configuration.Configuration;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Discovery through NVML (the stand-in library): the same infos as nvidia-smi on the same host. */
@DisplayName("The nvml backend")
@ExtendWith(StopDeviceMonitors.class)
class NvmlBackendTest {

    @TempDir Path temp;

    private static List<Map<String, String>> retrieve(InstalledNvidiaHost host, Map<String, String> env, long amount, String... kv)
            throws Exception {
        Configuration c = new Configuration();
        c.setString("monitor.interval", "0");
        for (int i = 0; i < kv.length; i += 2) {
            c.setString(kv[i], kv[i + 1]);
        }
        NvidiaGpuDriver d = (NvidiaGpuDriver) new NvidiaGpuDriverFactory(env).createExternalResourceDriver(c);
        List<Map<String, String>> out = new ArrayList<>();
        for (GpuInfo info : d.retrieveResourceInfo(amount)) {
            Map<String, String> props = new LinkedHashMap<>();
            for (String k : info.getKeys()) {
                props.put(k, info.getProperty(k).orElse(null));
            }
            props.put("coordination-id", d.backend().coordinationId(info));
            out.add(props);
        }
        return out;
    }

    private void agree(FakeNvidiaHost.Builder builder, Map<String, String> env, long amount, String... kv) throws Exception {
        InstalledNvidiaHost host = builder.install(FakeHost.create(temp.resolve("h" + System.nanoTime())));
        Path lib = NvmlStandIn.installOn(host);
        List<String> smi = new ArrayList<>(List.of("backend", "nvidia-smi", "nvidia-smi.path", host.smi().path().toString()));
        List<String> nvml = new ArrayList<>(List.of("backend", "nvml", "nvml.library", lib.toString()));
        smi.addAll(List.of(kv));
        nvml.addAll(List.of(kv));
        List<Map<String, String>> bySmi = retrieve(host, env, amount, smi.toArray(new String[0]));
        List<Map<String, String>> byNvml = retrieve(host, env, amount, nvml.toArray(new String[0]));
        assertThat(byNvml).as("infos through NVML").isEqualTo(bySmi).isNotEmpty();
    }

    @Test
    @DisplayName("gives every property nvidia-smi gives for whole GPUs: UUID, name, memory total, PCI address, architecture")
    void wholeGpusAgree() throws Exception {
        agree(FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 2).gpu(Model.T4), Map.of(), 3);
    }

    @Test
    @DisplayName("finds MIG units of a profile with the same ids and coordination ids as nvidia-smi -L")
    void migUnitsAgree() throws Exception {
        agree(FakeNvidiaHost.builder().gpu(Model.A100_SXM_80GB, "1g.10gb", "1g.10gb", "3g.40gb").gpu(Model.A100_SXM_80GB),
                Map.of(), 2, "mig", "true", "mig.profile", "1g.10gb");
    }

    @Test
    @DisplayName("applies the TaskManager's CUDA_VISIBLE_DEVICES as the nvidia-smi backend does")
    void visibleDevicesAgree() throws Exception {
        agree(FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 4), Map.of("CUDA_VISIBLE_DEVICES", "2,0"), 2);
    }

    @Test
    @DisplayName("a later discovery gives the same infos from the facts kept of each GPU, and leaves out a GPU that fell off the bus, as nvidia-smi does")
    void laterDiscoveryKeepsFactsButSeesLostGpus() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 3).install(FakeHost.create(temp));
        String lib = NvmlStandIn.installOn(host).toString();
        List<Map<String, String>> first = retrieve(host, Map.of(), 3, "backend", "nvml", "nvml.library", lib);
        assertThat(retrieve(host, Map.of(), 3, "backend", "nvml", "nvml.library", lib)).isEqualTo(first);
        host.removeGpu(1);
        assertThatThrownBy(() -> retrieve(host, Map.of(), 3, "backend", "nvml", "nvml.library", lib))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessageContaining("3");
        List<Map<String, String>> rest = retrieve(host, Map.of(), 2, "backend", "nvml", "nvml.library", lib);
        assertThat(rest).extracting(p -> p.get("uuid"))
                .containsExactly(FakeNvidiaHost.gpuUuid(0), FakeNvidiaHost.gpuUuid(2));
        assertThat(rest).as("the same infos through nvidia-smi, which no longer lists the lost GPU")
                .isEqualTo(retrieve(host, Map.of(), 2, "backend", "nvidia-smi", "nvidia-smi.path", host.smi().path().toString()));
    }

    @Test
    @DisplayName("NVML refusing to start says so with NVML's own reason and what to do")
    void initRefused() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 1).install(FakeHost.create(temp));
        Path lib = NvmlStandIn.installOn(host);
        host.nvmlInitError(18);
        assertThatThrownBy(() -> retrieve(host, Map.of(), 1, "backend", "nvml", "nvml.library", lib.toString()))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessageContaining("NVML (" + lib + ") refused to start: nvmlInit_v2 returned"
                        + " 'RM has detected an NVML/RM version mismatch.' (nvmlReturn_t 18)")
                .hasMessageContaining("of different versions");
    }

    @Test
    @DisplayName("a missing libnvidia-ml.so.1 is a clear message naming the library, never an Error")
    void missingLibrary() {
        assertThatThrownBy(() -> Nvml.open("libnvidia-ml-not-here.so.1"))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessageStartingWith("native library libnvidia-ml-not-here.so.1 (NVIDIA management library, through JNA)"
                        + " could not be loaded (libnvidia-ml-not-here.so.1: cannot open shared object file: No such file or directory);")
                .hasMessageContaining("install the NVIDIA driver");
    }

    /** Rewrites field {@code field} (0 = the record kind) of the stand-in's {@code gpu} record of GPU {@code gpu}. */
    private static void gpuField(InstalledNvidiaHost host, int gpu, int field, String value) throws Exception {
        List<String> lines = new ArrayList<>();
        for (String line : Files.readAllLines(host.nvmlState())) {
            String[] f = line.split("\t", -1);
            if (f[0].equals("gpu") && f[1].equals(Integer.toString(gpu))) {
                f[field] = value;
                line = String.join("\t", f);
            }
            lines.add(line);
        }
        Files.write(host.nvmlState(), lines);
    }

    @Test
    @DisplayName("a GPU whose UUID from NVML has a space is left out with one WARN naming NVML and the field; alone on the host it is a clear error")
    void uuidWithASpace() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 2).install(FakeHost.create(temp));
        String lib = NvmlStandIn.installOn(host).toString();
        gpuField(host, 1, 2, "GPU-5f1c x");
        try (LogCapture log = LogCapture.warnings(UnitSelector.class)) {
            List<Map<String, String>> gpus = retrieve(host, Map.of(), 1, "backend", "nvml", "nvml.library", lib);
            assertThat(gpus).singleElement().satisfies(g -> assertThat(g.get("uuid")).isEqualTo(FakeNvidiaHost.gpuUuid(0)));
            assertThat(log.text()).contains("GPU 1 is left out: nvml (" + lib)
                    .contains("uuid of GPU 1 is 'GPU-5f1c x'; expected an identifier of 1 to 256 printable characters without"
                            + " spaces or control characters, but it has a space at position 9");
        }
        assertThatThrownBy(() -> retrieve(host, Map.of(), 2, "backend", "nvml", "nvml.library", lib))
                .hasMessageContaining("Asked for 2").hasMessageContaining("found 1");

        gpuField(host, 0, 2, "GPU-1 2");
        assertThatThrownBy(() -> retrieve(host, Map.of(), 1, "backend", "nvml", "nvml.library", lib))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessageContaining("lists no GPU this driver can hand out: every one was left out for an identifier that cannot"
                        + " be handed on in CUDA_VISIBLE_DEVICES")
                .hasMessageContaining("uuid of GPU 0 is 'GPU-1 2'");
    }

    @Test
    @DisplayName("a compute capability major of -5 from NVML leaves the architecture out (never sm_-50), with one WARN")
    void impossibleComputeCapability() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 1).install(FakeHost.create(temp));
        String lib = NvmlStandIn.installOn(host).toString();
        gpuField(host, 0, 13, "-5");
        try (LogCapture log = LogCapture.warnings(GpuFacts.class)) {
            Map<String, String> g = retrieve(host, Map.of(), 1, "backend", "nvml", "nvml.library", lib).get(0);
            assertThat(g).doesNotContainKey("architecture").containsEntry("uuid", FakeNvidiaHost.gpuUuid(0));
            assertThat(log.text()).contains("NVML (nvmlDeviceGetCudaComputeCapability) reports compute capability major -5 minor 0 for GPU "
                    + FakeNvidiaHost.gpuUuid(0) + "; expected a major from 1 to 99 and a minor from 0 to 9: its architecture is left out");
        }
    }
}
