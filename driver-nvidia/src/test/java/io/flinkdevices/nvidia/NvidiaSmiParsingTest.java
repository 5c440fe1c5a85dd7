package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.logging.LogCapture;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Parsing what real nvidia-smi versions print, and reading CUDA_VISIBLE_DEVICES. */
class NvidiaSmiParsingTest {

    private static final String SRC = "nvidia-smi (/usr/bin/nvidia-smi, external-resource.gpu.param.nvidia-smi.path)";

    private static List<GpuInfo> parse(String out, boolean computeCap) throws DeviceDriverException {
        return SmiListing.parseQuery(out, computeCap, SRC).stream().map(g -> g.info).toList();
    }

    @Nested
    @DisplayName("The --query-gpu CSV")
    class Query {

        @Test
        @DisplayName("of an A100 with MIG on and an H100 gives every field, PCI address and architecture normalized")
        void dataCenterGpus() throws Exception {
            List<GpuInfo> gpus =
                    parse(
                            "0, GPU-4c3d2b1a-1111-2222-3333-444455556666, NVIDIA A100-SXM4-80GB, 81920, 00000000:07:00.0, 8.0, Enabled\n"
                                    + "1, GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff, NVIDIA H100 80GB HBM3, 81559, 00000000:3B:00.0, 9.0, Disabled\n",
                            true);

            assertThat(gpus).hasSize(2);
            GpuInfo a100 = gpus.get(0);
            assertThat(a100.getVendor()).isEqualTo("nvidia");
            assertThat(a100.getIndex()).isZero();
            assertThat(a100.getUuid()).hasValue("GPU-4c3d2b1a-1111-2222-3333-444455556666");
            assertThat(a100.getName()).hasValue("NVIDIA A100-SXM4-80GB");
            assertThat(a100.getMemoryBytes()).hasValue(81920L * 1024 * 1024);
            assertThat(a100.getPciAddress()).hasValue("0000:07:00.0");
            assertThat(a100.getArchitecture()).hasValue("sm_80");
            assertThat(a100.getVisibleDevicesEnv()).hasValue("CUDA_VISIBLE_DEVICES");
            assertThat(a100.getVisibleDevicesValue()).hasValue("GPU-4c3d2b1a-1111-2222-3333-444455556666");
            assertThat(gpus.get(1).getArchitecture()).hasValue("sm_90");
            assertThat(gpus.get(1).getPciAddress()).hasValue("0000:3b:00.0");
        }

        @Test
        @DisplayName("a GPU row nvidia-smi could not read ([GPU is lost], [Unknown Error]: falling off the bus, a reset) is left out with one WARN; the others are listed")
        void halfThereGpu() throws Exception {
            try (LogCapture log = LogCapture.warnings(NvidiaSmiBackend.class)) {
                List<GpuInfo> gpus = parse("0, GPU-4c3d2b1a-1111-2222-3333-444455556666, NVIDIA H100 80GB HBM3, 81559, 00000000:07:00.0, 9.0, Disabled\n"
                        + "1, [GPU is lost], [GPU is lost], [GPU is lost], 00000000:3B:00.0, [GPU is lost], [GPU is lost]\n"
                        + "2, GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff, NVIDIA H100 80GB HBM3, [Unknown Error], 00000000:3C:00.0, 9.0, Disabled\n"
                        + "3, GPU-00000000-0000-0000-0000-000000000003, NVIDIA H100 80GB HBM3, 81559, 00000000:3D:00.0, 9.0, [N/A]\n", true);
                assertThat(gpus).extracting(GpuInfo::getIndex).containsExactly(0, 3);
                assertThat(log.text()).contains(SRC + " listed a GPU it could not read (line 2: '1, [GPU is lost]")
                        .contains("a field is [GPU is lost]): left out, as a GPU that falls off the bus or is being reset")
                        .contains("(line 3: '2, GPU-9f8e7d6c").contains("a field is [Unknown Error]");
                assertThat(log.text().split("\n")).filteredOn(l -> l.contains("could not read")).hasSize(2);
            }
        }

        @Test
        @DisplayName("a compute capability with major 0, or a memory.total beyond any GPU, is an unexpected line naming the field")
        void impossibleNumbers() {
            assertThatThrownBy(() -> parse("0, GPU-1, T4, 15360, 00000000:00:1E.0, 0.5, [N/A]\n", true))
                    .hasMessageContaining("compute_cap '0.5' is not like 9.0 (major 1 to 99)");
            assertThatThrownBy(() -> parse("0, GPU-1, T4, 18446744073709551615, 00000000:00:1E.0, 7.5, [N/A]\n", true))
                    .hasMessageContaining("memory.total '18446744073709551615' is not a number of MiB from 0 to 1073741824");
            assertThatThrownBy(() -> parse("0, GPU-1, T4, -5, 00000000:00:1E.0, 7.5, [N/A]\n", true))
                    .hasMessageContaining("memory.total '-5' is not a number of MiB");
        }

        @Test
        @DisplayName("tolerates [N/A], [Not Supported], extra blanks, CR LF and blank lines")
        void unknownValuesAndBlanks() throws Exception {
            List<GpuInfo> gpus =
                    parse(
                            "\r\n  0 ,  GPU-00000000-0000-0000-0000-000000000001 ,   Tesla T4 , 15360 , 00000000:00:1E.0 , 7.5 , [N/A]  \r\n"
                                    + "1, [N/A], NVIDIA GeForce RTX 3090, [Not Supported], [N/A], [N/A], [Not Supported]\r\n\r\n",
                            true);

            assertThat(gpus.get(0).getName()).hasValue("Tesla T4");
            assertThat(gpus.get(0).getPciAddress()).hasValue("0000:00:1e.0");
            GpuInfo unknown = gpus.get(1);
            assertThat(unknown.getUuid()).isEmpty();
            assertThat(unknown.getMemoryBytes()).isEmpty();
            assertThat(unknown.getArchitecture()).isEmpty();
            assertThat(unknown.getVisibleDevicesValue())
                    .as("without a UUID the index selects the GPU")
                    .hasValue("1");
        }

        @Test
        @DisplayName("skips nvidia-smi's WARNING lines (infoROM is corrupted) and reads the GPUs, the warning in a WARN log")
        void warningLines() throws Exception {
            try (LogCapture log = LogCapture.warnings(NvidiaSmiBackend.class)) {
                List<GpuInfo> gpus =
                        parse(
                                "WARNING: infoROM is corrupted at gpu 0000:00:06.0\n"
                                        + "0, GPU-4c3d2b1a-1111-2222-3333-444455556666, NVIDIA H200, 143771, 00000000:00:06.0, 9.0, Disabled\n"
                                        + "1, GPU-9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff, NVIDIA H200, 143771, 00000000:00:07.0, 9.0, Disabled\n",
                                true);

                assertThat(gpus).extracting(GpuInfo::getIndex).containsExactly(0, 1);
                assertThat(log.text()).contains("printed 1 warning line(s), skipped: [WARNING: infoROM is corrupted at gpu 0000:00:06.0]");
            }
        }

        @Test
        @DisplayName("of a driver older than 510 (no compute_cap field) leaves the architecture unknown")
        void oldDriver() throws Exception {
            List<GpuInfo> gpus =
                    parse("0, GPU-00000000-0000-0000-0000-000000000001, Tesla V100-SXM2-32GB, 32768, 00000000:1A:00.0, [N/A]\n", false);

            assertThat(gpus.get(0).getArchitecture()).isEmpty();
            assertThat(gpus.get(0).getMemoryBytes()).hasValue(32768L << 20);
        }

        @Test
        @DisplayName("with no GPU is an empty list")
        void noGpu() throws Exception {
            assertThat(parse("", true)).isEmpty();
        }

        @Test
        @DisplayName("sorts by index")
        void sorted() throws Exception {
            assertThat(parse("1, [N/A], b, 1, [N/A], 8.0, [N/A]\n0, [N/A], a, 1, [N/A], 8.0, [N/A]\n", true))
                    .extracting(GpuInfo::getIndex)
                    .containsExactly(0, 1);
        }

        @Test
        @DisplayName("cut off mid-line is an error naming the program, the line and the fields expected")
        void truncated() {
            assertThatThrownBy(
                            () ->
                                    parse("0, GPU-00000000-0000-0000-0000-000000000001, NVIDIA A100-SXM4-80GB, 81920, 00000000:07:00.0, 8.0, Disabled\n1, GPU-0000", true))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("/usr/bin/nvidia-smi")
                    .hasMessageContaining("external-resource.gpu.param.nvidia-smi.path")
                    .hasMessageContaining("line 2")
                    .hasMessageContaining("expected 7 comma-separated fields")
                    .hasMessageContaining("truncated");
        }

        @Test
        @DisplayName("that is garbage is an error quoting the line")
        void garbage() {
            assertThatThrownBy(() -> parse("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.", true))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("unexpected line 1")
                    .hasMessageContaining("couldn't communicate");
            assertThatThrownBy(() -> parse("x, a, b, c, d, e, f", true))
                    .hasMessageContaining("the index 'x' is not a whole number");
            assertThatThrownBy(() -> parse("0, a, b, lots, [N/A], 8.0, [N/A]", true))
                    .hasMessageContaining("memory.total 'lots'");
            assertThatThrownBy(() -> parse("0, a, b, 1, pci, 8.0, [N/A]", true))
                    .hasMessageContaining("pci.bus_id 'pci'");
            assertThatThrownBy(() -> parse("0, a, b, 1, [N/A], nine, [N/A]", true))
                    .hasMessageContaining("compute_cap 'nine'");
            assertThatThrownBy(() -> parse("0, a, b, 1, [N/A], 8.0, [N/A]\n0, c, d, 1, [N/A], 8.0, [N/A]", true))
                    .hasMessageContaining("GPU 0 is listed twice");
        }
    }

    @Nested
    @DisplayName("nvidia-smi -L")
    class ListMig {

        @Test
        @DisplayName("gives each MIG device with its GPU, profile and UUID")
        void migDevices() throws Exception {
            List<SmiListing.Mig> migs =
                    SmiListing.parseList(
                            "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-4c3d2b1a-1111-2222-3333-444455556666)\n"
                                    + "  MIG 3g.40gb     Device  0: (UUID: MIG-11111111-2222-3333-4444-555555555555)\n"
                                    + "  MIG 1g.10gb     Device  1: (UUID: MIG-66666666-7777-8888-9999-000000000000)\r\n"
                                    + "GPU 1: Tesla T4 (UUID: GPU-00000000-0000-0000-0000-000000000001)\n",
                            SRC);

            assertThat(migs)
                    .containsExactly(
                            new SmiListing.Mig(0, "3g.40gb", 0, "MIG-11111111-2222-3333-4444-555555555555"),
                            new SmiListing.Mig(0, "1g.10gb", 1, "MIG-66666666-7777-8888-9999-000000000000"));
        }

        @Test
        @DisplayName("with a line it does not know is an error quoting it")
        void garbage() {
            assertThatThrownBy(() -> SmiListing.parseList("No devices were found\n", SRC))
                    .hasMessageContaining("-L printed an unexpected line 1")
                    .hasMessageContaining("No devices were found");
        }
    }

    @Nested
    @DisplayName("CUDA_VISIBLE_DEVICES")
    class Visible {

        private final List<GpuInfo> host =
                List.of(gpu(0, "GPU-aaaa0000-0000-0000-0000-000000000000"),
                        gpu(1, "GPU-bbbb0000-0000-0000-0000-000000000000"),
                        gpu(2, "GPU-cccc0000-0000-0000-0000-000000000000"));

        private GpuInfo gpu(int index, String uuid) {
            return GpuInfo.builder("nvidia", index).uuid(uuid).build();
        }

        private List<Integer> visible(String value) throws DeviceDriverException {
            Map<String, String> env = value == null ? Map.of() : Map.of("CUDA_VISIBLE_DEVICES", value);
            return VisibleDevices.from(env).apply(host, Map.of()).stream().map(GpuInfo::getIndex).toList();
        }

        @Test
        @DisplayName("unset allows every GPU; empty or NoDevFiles allows none")
        void unsetEmptyNone() throws Exception {
            assertThat(visible(null)).containsExactly(0, 1, 2);
            // empty or NoDevFiles hides every GPU: an error that says so, not "found 0"
            assertThatThrownBy(() -> visible(""))
                    .hasMessageStartingWith("CUDA_VISIBLE_DEVICES='' hides every GPU from this TaskManager")
                    .hasMessageContaining("the host has 3");
            assertThatThrownBy(() -> visible("NoDevFiles"))
                    .hasMessageStartingWith("CUDA_VISIBLE_DEVICES='NoDevFiles' hides every GPU");
        }

        @Test
        @DisplayName("selects by index, UUID or UUID prefix, in the variable's order")
        void indexesAndUuids() throws Exception {
            assertThat(visible("2,0")).containsExactly(2, 0);
            assertThat(visible("GPU-bbbb0000-0000-0000-0000-000000000000, 0")).containsExactly(1, 0);
            assertThat(visible("GPU-cccc")).containsExactly(2);
        }

        @Test
        @DisplayName("an entry matching no GPU is an error naming the variable and the host's GPUs")
        void noMatch() {
            assertThatThrownBy(() -> visible("0,7"))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("CUDA_VISIBLE_DEVICES='0,7'")
                    .hasMessageContaining("entry '7' matches no GPU")
                    .hasMessageContaining("GPU-cccc0000");
            assertThatThrownBy(() -> visible("GPU-dead")).hasMessageContaining("entry 'GPU-dead'");
        }

        @Test
        @DisplayName("a GPU's index or UUID selects all its MIG devices")
        void migParents() throws Exception {
            GpuInfo mig = GpuInfo.builder("nvidia", 1).uuid("MIG-1").partition("1g.10gb").build();
            VisibleDevices v = VisibleDevices.from(Map.of("CUDA_VISIBLE_DEVICES", "1"));
            assertThat(v.apply(List.of(mig), Map.of(mig, new VisibleDevices.GpuRef(1, Optional.of("GPU-x")))))
                    .containsExactly(mig);
        }
    }

    @Test
    @DisplayName("a CUDA UUID's 16 bytes print as nvidia-smi prints them")
    void cudaUuid() {
        byte[] b = new byte[16];
        for (int i = 0; i < 16; i++) {
            b[i] = (byte) (0xf0 + i);
        }
        assertThat(JCudaBackend.formatUuid(b)).isEqualTo("GPU-f0f1f2f3-f4f5-f6f7-f8f9-fafbfcfdfeff");
    }
}
