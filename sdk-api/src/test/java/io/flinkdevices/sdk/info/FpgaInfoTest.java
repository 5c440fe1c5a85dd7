package io.flinkdevices.sdk.info;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

class FpgaInfoTest {

    private static FpgaInfo fullU250() {
        return FpgaInfo.builder("Xilinx", 1, "xilinx_u250_gen3x16_xdma_shell_4_1", 2)
                .vendor("Xilinx, Inc.")
                .globalMemoryBytes(68_719_476_736L)
                .computeUnits(4)
                .bitstream("vadd.xclbin")
                .build();
    }

    @Nested
    @DisplayName("the builder rejects what cannot describe an FPGA")
    class Validation {

        @Test
        @DisplayName("a blank platform or device name")
        void blankNames() {
            assertThatThrownBy(() -> FpgaInfo.builder(" ", 0, "dev", 0).build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("FPGA platform must not be blank");
            assertThatThrownBy(() -> FpgaInfo.builder("pocl", 0, null, 0).build())
                    .hasMessage("FPGA device-name must not be blank");
        }

        @Test
        @DisplayName("a negative platform or device index, naming both")
        void negativeIndexes() {
            assertThatThrownBy(() -> FpgaInfo.builder("pocl", -1, "dev", 0).build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("FPGA platform-index and device-index must be >= 0 but are -1 and 0");
            assertThatThrownBy(() -> FpgaInfo.builder("pocl", 0, "dev", -2).build())
                    .hasMessageContaining("but are 0 and -2");
        }

        @Test
        @DisplayName("negative memory or compute units")
        void negativeSizes() {
            assertThatThrownBy(() -> FpgaInfo.builder("pocl", 0, "dev", 0).globalMemoryBytes(-1))
                    .hasMessage("FPGA global-memory-bytes must be >= 0 but is -1");
            assertThatThrownBy(() -> FpgaInfo.builder("pocl", 0, "dev", 0).computeUnits(-3))
                    .hasMessage("FPGA compute-units must be >= 0 but is -3");
        }
    }

    @Nested
    @DisplayName("properties and typed getters describe the same FPGA")
    class Properties {

        @Test
        @DisplayName("a fully described FPGA lists every property, each equal to its getter")
        void full() {
            FpgaInfo fpga = fullU250();

            assertThat(fpga.asMap())
                    .containsExactly(
                            entry(FpgaInfo.KEY_KIND, "fpga"),
                            entry(FpgaInfo.KEY_PLATFORM, fpga.getPlatform()),
                            entry(FpgaInfo.KEY_VENDOR, fpga.getVendor().orElseThrow()),
                            entry(FpgaInfo.KEY_DEVICE_NAME, fpga.getDeviceName()),
                            entry(FpgaInfo.KEY_PLATFORM_INDEX, String.valueOf(fpga.getPlatformIndex())),
                            entry(FpgaInfo.KEY_DEVICE_INDEX, String.valueOf(fpga.getDeviceIndex())),
                            entry(
                                    FpgaInfo.KEY_GLOBAL_MEMORY_BYTES,
                                    String.valueOf(fpga.getGlobalMemoryBytes().getAsLong())),
                            entry(
                                    FpgaInfo.KEY_COMPUTE_UNITS,
                                    String.valueOf(fpga.getComputeUnits().getAsLong())),
                            entry(FpgaInfo.KEY_BITSTREAM, fpga.getBitstream().orElseThrow()));
            assertThat(fpga.getKeys()).containsExactlyElementsOf(fpga.asMap().keySet());
            for (String key : fpga.getKeys()) {
                assertThat(fpga.getProperty(key)).contains(fpga.asMap().get(key));
            }
        }

        @Test
        @DisplayName("a minimal FPGA lists only what is known")
        void minimal() {
            FpgaInfo fpga = FpgaInfo.builder("Portable Computing Language", 0, "cpu-haswell", 0).build();

            assertThat(fpga.getKeys())
                    .containsExactly("kind", "platform", "device-name", "platform-index", "device-index");
            assertThat(fpga.getVendor()).isEmpty();
            assertThat(fpga.getGlobalMemoryBytes()).isEmpty();
            assertThat(fpga.getComputeUnits()).isEmpty();
            assertThat(fpga.getBitstream()).isEmpty();
        }
    }

    @Test
    @DisplayName("equality follows platform, device name and both indexes, not descriptive fields")
    void identity() {
        FpgaInfo a = FpgaInfo.builder("Xilinx", 0, "u250", 1).bitstream("a.xclbin").build();
        FpgaInfo b = FpgaInfo.builder("Xilinx", 0, "u250", 1).bitstream("b.xclbin").computeUnits(2).build();

        assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
        assertThat(a)
                .isNotEqualTo(FpgaInfo.builder("Xilinx", 1, "u250", 1).build())
                .isNotEqualTo(FpgaInfo.builder("Xilinx", 0, "u250", 0).build())
                .isNotEqualTo(FpgaInfo.builder("Intel", 0, "u250", 1).build())
                .isNotEqualTo(FpgaInfo.builder("Xilinx", 0, "u280", 1).build());
    }

    @Test
    @DisplayName("keys and property map reject changes")
    void immutable() {
        FpgaInfo fpga = fullU250();

        assertThatThrownBy(() -> fpga.getKeys().clear()).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> fpga.asMap().put("bitstream", "evil.xclbin"))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThat(fpga.getBitstream()).contains("vadd.xclbin");
    }

    @Nested
    @DisplayName("from(...) reads an FPGA out of any ExternalResourceInfo")
    class From {

        @Test
        @DisplayName("a foreign implementation with the same properties round-trips completely")
        void roundTrip() {
            FpgaInfo fpga = fullU250();

            FpgaInfo read = FpgaInfo.from(new MapBackedInfo(fpga.asMap()));

            assertThat(read).isEqualTo(fpga);
            assertThat(read.asMap()).containsExactlyEntriesOf(fpga.asMap());
            assertThat(FpgaInfo.from(fpga)).isSameAs(fpga);
        }

        @Test
        @DisplayName("each missing required property is named")
        void missing() {
            Map<String, String> props = fullU250().asMap();
            for (String key :
                    new String[] {
                        FpgaInfo.KEY_PLATFORM,
                        FpgaInfo.KEY_DEVICE_NAME,
                        FpgaInfo.KEY_PLATFORM_INDEX,
                        FpgaInfo.KEY_DEVICE_INDEX
                    }) {
                assertThatThrownBy(() -> FpgaInfo.from(MapBackedInfo.without(props, key)))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("Not a FpgaInfo")
                        .hasMessageContaining("property '" + key + "' is missing");
            }
        }

        @Test
        @DisplayName("a GPU is refused by its kind")
        void otherKind() {
            assertThatThrownBy(() -> FpgaInfo.from(GpuInfo.builder("nvidia", 0).build()))
                    .hasMessageContaining("kind 'gpu'")
                    .hasMessageContaining("expected 'fpga'");
        }
    }
}
