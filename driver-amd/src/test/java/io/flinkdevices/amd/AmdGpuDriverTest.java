package io.flinkdevices.amd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.fake.FakeAmdHost;
import io.flinkdevices.testkit.fake.FakeAmdHost.Model;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;
import io.flinkdevices.testkit.logging.LogCapture;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.configuration.Configuration;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/** What the AMD driver hands out on fake MI300X, MI210 and Radeon hosts, through each backend. */
@ExtendWith(StopDeviceMonitors.class)
class AmdGpuDriverTest {

    @TempDir Path temp;
    private int hosts;

    private FakeHost host() {
        return FakeHost.create(temp.resolve("host" + hosts++));
    }

    private static ExternalResourceDriver driver(Map<String, String> env, String... kv) throws Exception {
        Configuration c = new Configuration();
        for (int i = 0; i < kv.length; i += 2) {
            c.setString(kv[i], kv[i + 1]);
        }
        return new AmdGpuDriverFactory(env).createExternalResourceDriver(c);
    }

    private static List<String> roots(FakeAmdHost.Installed amd, String... more) {
        List<String> kv = new ArrayList<>(List.of("sysfs.root", amd.sys().root().toString(), "dev.root", amd.dev().root().toString()));
        kv.addAll(List.of(more));
        return kv;
    }

    private static List<GpuInfo> get(ExternalResourceDriver d, long amount) throws Exception {
        return d.retrieveResourceInfo(amount).stream().map(GpuInfo::from).collect(Collectors.toList());
    }

    @Test
    @DisplayName("sysfs: a KFD node listed while its properties are gone (driver reload, hot removal) is left out with one WARN; the other GPUs are offered, a damaged file stays an error")
    void halfThereNode() throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI300X, 3).installOn(host());
        amd.sys().remove("class/kfd/kfd/topology/nodes/2/properties");
        String[] kv = roots(amd, "backend", "sysfs").toArray(new String[0]);

        try (LogCapture log = LogCapture.warnings(SysfsBackend.class)) {
            assertThat(get(driver(Map.of(), kv), 2)).extracting(GpuInfo::getPciAddress)
                    .containsExactly(Optional.of(FakeAmdHost.pciAddress(0)), Optional.of(FakeAmdHost.pciAddress(2)));
            assertThat(log.text()).contains("KFD node 2 vanished or is half there while it is read ("
                    + amd.sys().path("class/kfd/kfd/topology/nodes/2/properties") + " does not exist: a driver reload or hot removal?)");
            assertThat(log.text().split("\n")).filteredOn(l -> l.contains("half there")).hasSize(1);
        }
        assertThatThrownBy(() -> get(driver(Map.of(), kv), 3))
                .hasMessageContaining("found 2")
                .hasMessageContaining("1 KFD node was left out while they vanished or were half there (a driver reload or hot removal?):"
                        + " [node 2 (" + amd.sys().path("class/kfd/kfd/topology/nodes/2/properties") + " does not exist)]");

        amd.sys().file("class/kfd/kfd/topology/nodes/2/properties", "simd_count lots\nvendor_id 4098\n");
        assertThatThrownBy(() -> get(driver(Map.of(), kv), 1))
                .as("a file that is there and damaged is the operator's to fix")
                .hasMessageContaining("nodes/2/properties 'simd_count' is 'lots'");
    }

    @Test
    @DisplayName("sysfs, 8 MI300X in SPX: whole GPUs with every field, index order, ROCR_VISIBLE_DEVICES per GPU")
    void sysfsWholeGpus() throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI300X, 8).installOn(host());
        List<GpuInfo> gpus = get(driver(Map.of(), roots(amd, "backend", "sysfs").toArray(new String[0])), 8);

        assertThat(gpus).hasSize(8);
        GpuInfo g = gpus.get(2);
        assertThat(g.getVendor()).isEqualTo("amd");
        assertThat(g.getIndex()).isEqualTo(2);
        assertThat(g.getName()).contains("AMD Instinct MI300X OAM");
        assertThat(g.getUuid()).contains("GPU-" + FakeAmdHost.uniqueId(2, 0));
        assertThat(g.getPciAddress()).contains(FakeAmdHost.pciAddress(2));
        assertThat(g.getArchitecture()).contains("gfx942");
        assertThat(g.getRenderNode()).contains("/dev/dri/renderD130");
        assertThat(g.getMemoryBytes()).hasValue(Model.MI300X.vramBytes());
        assertThat(g.getPartition()).isEmpty();
        assertThat(g.getVisibleDevicesEnv()).contains("ROCR_VISIBLE_DEVICES");
        assertThat(g.getVisibleDevicesValue()).contains("2");
    }

    @Test
    @DisplayName("sysfs, 8 MI300X in CPX/NPS4 with unit partition: 64 partitions, each its own agent and render node")
    void sysfsPartitions() throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI300X, 8, "CPX", "NPS4").installOn(host());
        ExternalResourceDriver d = driver(Map.of(), roots(amd, "unit", "partition", "partition.profile", "CPX/NPS4").toArray(new String[0]));
        List<GpuInfo> parts = get(d, 64);

        assertThat(parts).hasSize(64);
        assertThat(parts.stream().map(p -> p.getVisibleDevicesValue().orElseThrow()).distinct()).hasSize(64);
        GpuInfo p9 = parts.get(9);
        assertThat(p9.getIndex()).isEqualTo(9);
        assertThat(p9.getPartition()).contains("CPX/NPS4");
        assertThat(p9.getPciAddress()).contains(FakeAmdHost.pciAddress(1));
        assertThat(p9.getRenderNode()).contains("/dev/dri/renderD137");
        assertThat(p9.getMemoryBytes()).hasValue(Model.MI300X.vramBytes() / 4);
        assertThat(((AmdGpuDriver) d).kubernetesResources(3)).containsExactly(Map.entry("amd.com/cpx_nps4", 3L));
    }

    @Test
    @DisplayName("unit gpu on CPX GPUs: one info per GPU selecting all its partitions, memory of the whole GPU")
    void wholeGpusOfPartitionedHost() throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI300X, 2, "CPX", "NPS4").installOn(host());
        List<GpuInfo> gpus = get(driver(Map.of(), roots(amd).toArray(new String[0])), 2);

        assertThat(gpus).hasSize(2);
        assertThat(gpus.get(1).getVisibleDevicesValue()).contains("8,9,10,11,12,13,14,15");
        assertThat(gpus.get(1).getMemoryBytes()).hasValue(Model.MI300X.vramBytes());
        assertThatThrownBy(() -> get(driver(Map.of(), roots(amd).toArray(new String[0])), 3))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessageContaining("Asked for 3 AMD GPUs (external-resource")
                .hasMessageContaining("found 2");
    }

    @Test
    @DisplayName("amd-smi: both envelopes and the accelerator_partition rename give what sysfs gives")
    void amdSmiEnvelopes() throws Exception {
        for (FakeAmdHost.Builder b :
                List.of(
                        FakeAmdHost.builder().gpus(Model.MI300X, 2, "CPX", "NPS4"),
                        FakeAmdHost.builder().gpus(Model.MI300X, 2, "CPX", "NPS4").bareArray(),
                        FakeAmdHost.builder().gpus(Model.MI300X, 2, "CPX", "NPS4").acceleratorPartition())) {
            FakeHost h = host();
            b.installOn(h);
            List<GpuInfo> parts =
                    get(driver(Map.of(), "backend", "amd-smi", "unit", "partition", "amd-smi.path", h.bin("amd-smi").toString()), 16);
            assertThat(parts).hasSize(16);
            assertThat(parts.get(9).getPartition()).contains("CPX/NPS4");
            assertThat(parts.get(9).getUuid()).contains("GPU-" + FakeAmdHost.uniqueId(1, 1) + "/1");
            assertThat(parts.get(9).getArchitecture()).contains("gfx942");
            assertThat(parts.get(9).getMemoryBytes()).hasValue(Model.MI300X.vramBytes() / 4);
        }
    }

    @Test
    @DisplayName("rocm-smi and amd-smi on an MI210 and a Radeon RX 7900 XTX; auto uses amd-smi where sysfs has no KFD")
    void otherBackendsAndModels() throws Exception {
        FakeHost h = host();
        FakeAmdHost.builder().gpus(Model.MI210, 1).gpus(Model.RX_7900_XTX, 1).installOn(h);
        List<GpuInfo> rocm = get(driver(Map.of(), "backend", "rocm-smi", "rocm-smi.path", h.bin("rocm-smi").toString()), 2);
        assertThat(rocm.get(0).getName()).contains("AMD Instinct MI210");
        assertThat(rocm.get(1).getArchitecture()).contains("gfx1100");
        assertThat(rocm.get(1).getPciAddress()).contains(FakeAmdHost.pciAddress(1));

        Map<String, String> env = Map.of("PATH", h.bin().toString());
        AmdGpuDriver auto = (AmdGpuDriver) driver(env, "sysfs.root", temp.resolve("no-sys").toString());
        List<GpuInfo> found = get(auto, 2);
        assertThat(found.get(1).getName()).contains("AMD Radeon RX 7900 XTX");
        assertThat(found.get(1).getMemoryBytes()).hasValue(Model.RX_7900_XTX.vramBytes());
        assertThat(auto.backend().describe()).startsWith("amd-smi");
    }

    @Test
    @DisplayName("HIP's other variables are honoured: CUDA_VISIBLE_DEVICES and GPU_DEVICE_ORDINAL alone select, '0,1' and '0, 1' agree")
    void hipsOtherVariables() throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI300X, 4).installOn(host());
        String[] kv = roots(amd).toArray(new String[0]);

        assertThat(get(driver(Map.of("CUDA_VISIBLE_DEVICES", "2"), kv), 1)).extracting(GpuInfo::getIndex).containsExactly(2);
        assertThat(get(driver(Map.of("GPU_DEVICE_ORDINAL", "3,1"), kv), 2)).extracting(GpuInfo::getIndex).containsExactly(3, 1);
        assertThat(get(driver(Map.of("ROCR_VISIBLE_DEVICES", "0,1", "HIP_VISIBLE_DEVICES", "0, 1"), kv), 2))
                .extracting(GpuInfo::getIndex).containsExactly(0, 1);
        assertThatThrownBy(() -> get(driver(Map.of("ROCR_VISIBLE_DEVICES", "0,1", "HIP_VISIBLE_DEVICES", "0, 1"), kv), 3))
                .hasMessageContaining("found 2").hasMessageContaining("Lower external-resource.<resource>.amount to 2");
    }

    @Test
    @DisplayName("sysfs: a unique_id of 2^63 and above (printed unsigned) is the GPU's id; control characters and bad UTF-8 in product_name become '?'")
    void sysfsHostileButUsableValues() throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI210, 2).installOn(host());
        for (int node = 1; node <= 2; node++) {
            String rel = "class/kfd/kfd/topology/nodes/" + node + "/properties";
            String props = java.nio.file.Files.readString(amd.sys().root().resolve(rel));
            amd.sys().file(rel, props.replaceFirst("(?m)^unique_id .*$", "unique_id " + (node == 1 ? "18446744073709551615" : "9223372036854775808")));
        }
        java.nio.file.Files.write(amd.sys().root().resolve("devices/pci0000:00/" + FakeAmdHost.pciAddress(0) + "/product_name"),
                new byte[] {'M', 'I', '2', '1', '0', 0x1b, '[', '2', 'J', '\n', 'X', (byte) 0xff, (byte) 0xfe, '\n'});

        List<GpuInfo> gpus = get(driver(Map.of(), roots(amd, "backend", "sysfs").toArray(new String[0])), 2);

        assertThat(gpus.get(0).getUuid()).contains("GPU-ffffffffffffffff");
        assertThat(gpus.get(1).getUuid()).contains("GPU-8000000000000000");
        assertThat(gpus.get(0).getName()).contains("MI210?[2J?X??");
        assertThat(get(driver(Map.of("ROCR_VISIBLE_DEVICES", "GPU-8000000000000000"), roots(amd, "backend", "sysfs").toArray(new String[0])), 1))
                .extracting(GpuInfo::getIndex).containsExactly(1);
    }

    @Test
    @DisplayName("amd-smi: a VRAM size no GPU can have (20 digits, 9 EB, negative) is left out, the GPU still handed out")
    void amdSmiGarbageSizes() throws Exception {
        FakeAmdHost.Builder b = FakeAmdHost.builder().gpus(Model.MI300X, 3);
        String json = b.amdSmiStatic();
        String[] sizes = {"\"size\": \"99999999999999999999 MB\"", "\"size\": {\"value\": 9000000000000, \"unit\": \"TB\"}",
            "\"size\": {\"value\": -5, \"unit\": \"MB\"}"};
        for (String size : sizes) {
            json = json.replaceFirst("\"size\": \\{\"value\": 196608, \"unit\": \"MB\"\\}", java.util.regex.Matcher.quoteReplacement(size));
        }
        FakeHost h = host();
        h.install(io.flinkdevices.testkit.fake.FakeExecutable.named("amd-smi").stdout(json));

        List<GpuInfo> gpus = get(driver(Map.of(), "backend", "amd-smi", "amd-smi.path", h.bin("amd-smi").toString()), 3);

        assertThat(gpus).extracting(GpuInfo::getIndex).containsExactly(0, 1, 2);
        assertThat(gpus).allSatisfy(g -> assertThat(g.getMemoryBytes()).isEmpty());
    }

    @Test
    @DisplayName("amd-smi: [WARNING] lines before the JSON are skipped, a 3 MB market name is cut to 128 characters")
    void amdSmiWarningsAndLongNames() throws Exception {
        FakeAmdHost.Builder b = FakeAmdHost.builder().gpus(Model.MI300X, 2);
        String json = b.amdSmiStatic().replaceFirst("\"market_name\": \"[^\"]*\"", "\"market_name\": \"" + "M".repeat(3_000_000) + "\"");
        FakeHost h = host();
        h.install(io.flinkdevices.testkit.fake.FakeExecutable.named("amd-smi")
                .stdout("[WARNING] amdgpu driver version could not be read\nUserWarning: {old firmware}\n" + json));

        List<GpuInfo> gpus = get(driver(Map.of(), "backend", "amd-smi", "amd-smi.path", h.bin("amd-smi").toString()), 2);

        assertThat(gpus).extracting(GpuInfo::getIndex).containsExactly(0, 1);
        assertThat(gpus.get(0).getName().orElseThrow()).hasSize(Names.MAX_NAME + 3).startsWith("MMMM").endsWith("...");
        assertThat(gpus.get(1).getName()).contains(Model.MI300X.marketName());
    }

    @Test
    @DisplayName("ROCR_VISIBLE_DEVICES by index or GPU-<id> prefix, HIP_VISIBLE_DEVICES alone, disagreement refused")
    void visibleDevices() throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI300X, 4).installOn(host());
        String[] kv = roots(amd).toArray(new String[0]);
        String id3 = "GPU-" + FakeAmdHost.uniqueId(3, 0);

        assertThat(get(driver(Map.of("ROCR_VISIBLE_DEVICES", "2," + id3.substring(0, 18)), kv), 2))
                .extracting(GpuInfo::getIndex).containsExactly(2, 3);
        assertThat(get(driver(Map.of("HIP_VISIBLE_DEVICES", "1"), kv), 1)).extracting(GpuInfo::getIndex).containsExactly(1);
        assertThat(get(driver(Map.of("HIP_VISIBLE_DEVICES", "1", "ROCR_VISIBLE_DEVICES", "1"), kv), 1))
                .extracting(GpuInfo::getIndex).containsExactly(1);
        assertThatThrownBy(() -> get(driver(Map.of("HIP_VISIBLE_DEVICES", "0", "ROCR_VISIBLE_DEVICES", "1"), kv), 1))
                .hasMessageContaining("ROCR_VISIBLE_DEVICES='1' and HIP_VISIBLE_DEVICES='0' disagree");
        assertThatThrownBy(() -> get(driver(Map.of("ROCR_VISIBLE_DEVICES", "7"), kv), 1))
                .hasMessageContaining("ROCR_VISIBLE_DEVICES='7': entry '7' matches no AMD GPU agent of this host");
        assertThatThrownBy(() -> get(driver(Map.of("ROCR_VISIBLE_DEVICES", "0"), kv), 2))
                .hasMessageContaining("Asked for 2 AMD GPUs").hasMessageContaining("found 1");
    }

    @Test
    @DisplayName("a container given two of four render nodes uses those two; given none or no /dev/kfd: a clear error")
    void containerDevices() throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI300X, 4).withoutRenderNode(0).withoutRenderNode(2).installOn(host());
        List<GpuInfo> gpus = get(driver(Map.of(), roots(amd).toArray(new String[0])), 2);
        assertThat(gpus).extracting(g -> g.getPciAddress().orElseThrow())
                .containsExactly(FakeAmdHost.pciAddress(1), FakeAmdHost.pciAddress(3));
        assertThat(gpus).extracting(GpuInfo::getIndex).containsExactly(0, 1);

        FakeAmdHost.Installed noKfd = FakeAmdHost.builder().gpus(Model.MI210, 1).withoutKfd().installOn(host());
        assertThatThrownBy(() -> get(driver(Map.of(), roots(noKfd, "backend", "sysfs").toArray(new String[0])), 1))
                .hasMessageContaining("dev.root")
                .hasMessageContaining("/kfd does not exist")
                .hasMessageContaining("--device=/dev/kfd");
    }

    @Test
    @DisplayName("coordination: two TaskManagers of one host get disjoint partitions; ids are <pci>/<partition>")
    void coordination() throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI300X, 1, "CPX", "NPS1").installOn(host());
        Path file = temp.resolve("amd.coordination");
        String[] kv = roots(amd, "unit", "partition", "coordination.enabled", "true", "coordination.file", file.toString()).toArray(new String[0]);
        Set<String> a = get(driver(Map.of(), kv), 5).stream().map(g -> g.getVisibleDevicesValue().orElseThrow()).collect(Collectors.toSet());
        assertThat(java.nio.file.Files.readString(file)).contains(FakeAmdHost.pciAddress(0) + "/4 ");
        ExternalResourceDriver second = driver(Map.of(), kv);
        assertThatThrownBy(() -> second.retrieveResourceInfo(4)).hasMessageContaining("3 of 8 discovered devices are free");
        Set<String> b = get(second, 3).stream().map(g -> g.getVisibleDevicesValue().orElseThrow()).collect(Collectors.toSet());
        assertThat(a).doesNotContainAnyElementsOf(b);
    }

    @Test
    @DisplayName("coordination across unit modes: a TaskManager holding a whole GPU excludes its partitions, and a held partition its GPU")
    void coordinationAcrossUnitModes() throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI300X, 2, "CPX", "NPS1").installOn(host());
        Path file = temp.resolve("amd.coordination");
        String[] wholeGpus = roots(amd, "unit", "gpu", "coordination.enabled", "true", "coordination.file", file.toString()).toArray(new String[0]);
        String[] partitions = roots(amd, "unit", "partition", "coordination.enabled", "true", "coordination.file", file.toString()).toArray(new String[0]);

        List<GpuInfo> whole = get(driver(Map.of(), wholeGpus), 1);
        String gpu0 = whole.iterator().next().getPciAddress().orElseThrow();
        List<GpuInfo> parts = get(driver(Map.of(), partitions), 8);
        assertThat(parts).extracting(g -> g.getPciAddress().orElseThrow()).containsOnly(FakeAmdHost.pciAddress(1)).doesNotContain(gpu0);
        assertThatThrownBy(() -> driver(Map.of(), partitions).retrieveResourceInfo(1))
                .hasMessageContaining("overlaps held " + gpu0);
        assertThatThrownBy(() -> driver(Map.of(), wholeGpus).retrieveResourceInfo(1))
                .hasMessageContaining("0 of 2 discovered devices are free");
    }

    @Test
    @DisplayName("decorators: amd.com/gpu, node-labeller selectors, yarn.io/gpu or the configured names")
    void decorators() throws Exception {
        AmdGpuDriver d = (AmdGpuDriver) driver(Map.of(), "kubernetes.product-name", "AMD_Instinct_MI300X_OAM",
                "kubernetes.device-id", "74a1", "yarn.resource-name", "yarn.io/amd-gpu");
        assertThat(d.kubernetesResources(2)).containsExactly(Map.entry("amd.com/gpu", 2L));
        assertThat(d.kubernetesNodeSelector())
                .containsExactly(Map.entry("amd.com/gpu.product-name", "AMD_Instinct_MI300X_OAM"), Map.entry("amd.com/gpu.device-id", "74a1"));
        assertThat(d.yarnResources(2)).containsExactly(Map.entry("yarn.io/amd-gpu", 2L));
    }
}
