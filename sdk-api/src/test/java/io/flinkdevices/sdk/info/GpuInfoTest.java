package io.flinkdevices.sdk.info;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

class GpuInfoTest {

    private static GpuInfo fullH100() {
        return GpuInfo.builder("nvidia", 3)
                .uuid("GPU-5f9c0d1e")
                .name("NVIDIA H100 80GB HBM3")
                .memoryBytes(85_899_345_920L)
                .architecture("sm_90")
                .pciAddress("0000:3b:00.0")
                .visibleDevices("CUDA_VISIBLE_DEVICES", "GPU-5f9c0d1e")
                .partition("1g.10gb")
                .build();
    }

    @Nested
    @DisplayName("the builder rejects what cannot describe a GPU")
    class Validation {

        @Test
        @DisplayName("a blank vendor")
        void blankVendor() {
            assertThatThrownBy(() -> GpuInfo.builder(" ", 0).build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("GPU vendor must not be blank");
            assertThatThrownBy(() -> GpuInfo.builder(null, 0).build())
                    .hasMessage("GPU vendor must not be blank");
        }

        @Test
        @DisplayName("a negative index")
        void negativeIndex() {
            assertThatThrownBy(() -> GpuInfo.builder("amd", -1).build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("GPU index must be >= 0 but is -1");
        }

        @Test
        @DisplayName("negative memory")
        void negativeMemory() {
            assertThatThrownBy(() -> GpuInfo.builder("amd", 0).memoryBytes(-5))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("GPU memory-bytes must be >= 0 but is -5");
        }

        @Test
        @DisplayName("a visible-devices variable without its value, or the other way round")
        void visibleDevicesHalf() {
            assertThatThrownBy(
                            () ->
                                    GpuInfo.builder("nvidia", 0)
                                            .visibleDevices("CUDA_VISIBLE_DEVICES", null)
                                            .build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("visible-devices.env and visible-devices.value")
                    .hasMessageContaining("must be given together");
            assertThatThrownBy(() -> GpuInfo.builder("nvidia", 0).visibleDevices(null, "0").build())
                    .hasMessageContaining("must be given together");
        }

        @Test
        @DisplayName("a blank visible-devices variable with a value (it would not survive from())")
        void visibleDevicesBlankHalf() {
            assertThatThrownBy(() -> GpuInfo.builder("nvidia", 0).visibleDevices("  ", "0").build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("must be given together");
        }
    }

    @Nested
    @DisplayName("properties and typed getters describe the same GPU")
    class Properties {

        @Test
        @DisplayName("a fully described GPU lists every property, each equal to its getter")
        void fullGpu() {
            GpuInfo gpu = fullH100();

            assertThat(gpu.getKeys())
                    .containsExactly(
                            GpuInfo.KEY_KIND,
                            GpuInfo.KEY_VENDOR,
                            GpuInfo.KEY_INDEX,
                            GpuInfo.KEY_UUID,
                            GpuInfo.KEY_NAME,
                            GpuInfo.KEY_MEMORY_BYTES,
                            GpuInfo.KEY_ARCHITECTURE,
                            GpuInfo.KEY_PCI_ADDRESS,
                            GpuInfo.KEY_VISIBLE_DEVICES_ENV,
                            GpuInfo.KEY_VISIBLE_DEVICES_VALUE,
                            GpuInfo.KEY_PARTITION);
            assertThat(gpu.getProperty(GpuInfo.KEY_KIND)).contains("gpu");
            assertThat(gpu.getProperty(GpuInfo.KEY_VENDOR)).contains(gpu.getVendor());
            assertThat(gpu.getProperty(GpuInfo.KEY_INDEX)).contains(String.valueOf(gpu.getIndex()));
            assertThat(gpu.getProperty(GpuInfo.KEY_UUID)).isEqualTo(gpu.getUuid());
            assertThat(gpu.getProperty(GpuInfo.KEY_NAME)).isEqualTo(gpu.getName());
            assertThat(gpu.getProperty(GpuInfo.KEY_MEMORY_BYTES))
                    .contains(String.valueOf(gpu.getMemoryBytes().getAsLong()));
            assertThat(gpu.getProperty(GpuInfo.KEY_ARCHITECTURE)).isEqualTo(gpu.getArchitecture());
            assertThat(gpu.getProperty(GpuInfo.KEY_PCI_ADDRESS)).isEqualTo(gpu.getPciAddress());
            assertThat(gpu.getProperty(GpuInfo.KEY_VISIBLE_DEVICES_ENV))
                    .isEqualTo(gpu.getVisibleDevicesEnv());
            assertThat(gpu.getProperty(GpuInfo.KEY_VISIBLE_DEVICES_VALUE))
                    .isEqualTo(gpu.getVisibleDevicesValue());
            assertThat(gpu.getProperty(GpuInfo.KEY_PARTITION)).isEqualTo(gpu.getPartition());
            assertThat(gpu.asMap()).containsOnlyKeys(gpu.getKeys());
        }

        @Test
        @DisplayName("a minimal GPU lists only what is known, and unknown getters are empty")
        void minimalGpu() {
            GpuInfo gpu = GpuInfo.builder("AMD", 1).name("  ").build();

            assertThat(gpu.asMap())
                    .containsExactly(entry("kind", "gpu"), entry("vendor", "amd"), entry("index", "1"));
            assertThat(gpu.getName()).isEmpty();
            assertThat(gpu.getUuid()).isEmpty();
            assertThat(gpu.getMemoryBytes()).isEmpty();
            assertThat(gpu.getPartition()).isEmpty();
            assertThat(gpu.getProperty(GpuInfo.KEY_NAME)).isEmpty();
            assertThat(gpu.getProperty("no-such-key")).isEmpty();
        }

        @Test
        @DisplayName("values are trimmed and the vendor is lower case")
        void normalised() {
            GpuInfo gpu = GpuInfo.builder(" NVIDIA ", 0).uuid(" GPU-1 ").build();

            assertThat(gpu.getVendor()).isEqualTo("nvidia");
            assertThat(gpu.getUuid()).contains("GPU-1");
            assertThat(gpu.getProperty("uuid")).contains("GPU-1");
        }

        @Test
        @DisplayName("the index property means what it means in Flink's own GPU plugin")
        void flinkCompatibleIndex() {
            assertThat(GpuInfo.builder("nvidia", 7).build().getProperty("index")).contains("7");
        }
    }

    @Nested
    @DisplayName("equality follows the device's identity")
    class Identity {

        @Test
        @DisplayName("descriptive fields do not matter")
        void descriptiveFieldsIgnored() {
            GpuInfo a = GpuInfo.builder("nvidia", 0).uuid("GPU-1").name("A100").build();
            GpuInfo b =
                    GpuInfo.builder("NVIDIA", 0)
                            .uuid("GPU-1")
                            .name("A100-SXM4-40GB")
                            .memoryBytes(40L << 30)
                            .build();

            assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
        }

        @Test
        @DisplayName("vendor, index, UUID and partition each tell devices apart")
        void identityFields() {
            GpuInfo base = GpuInfo.builder("nvidia", 0).uuid("GPU-1").partition("1g.10gb").build();

            assertThat(base)
                    .isNotEqualTo(GpuInfo.builder("amd", 0).uuid("GPU-1").partition("1g.10gb").build())
                    .isNotEqualTo(GpuInfo.builder("nvidia", 1).uuid("GPU-1").partition("1g.10gb").build())
                    .isNotEqualTo(GpuInfo.builder("nvidia", 0).uuid("GPU-2").partition("1g.10gb").build())
                    .isNotEqualTo(GpuInfo.builder("nvidia", 0).uuid("GPU-1").build())
                    .isNotEqualTo(new MapBackedInfo(base.asMap()));
        }
    }

    @Nested
    @DisplayName("an info cannot be changed once built")
    class Immutability {

        @Test
        @DisplayName("its keys and property map reject changes")
        void views() {
            GpuInfo gpu = fullH100();

            assertThatThrownBy(() -> gpu.getKeys().add("x"))
                    .isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> gpu.getKeys().remove("uuid"))
                    .isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> gpu.asMap().put("index", "9"))
                    .isInstanceOf(UnsupportedOperationException.class);
            assertThat(gpu.getIndex()).isEqualTo(3);
        }

        @Test
        @DisplayName("reusing its builder does not change it")
        void builderReuse() {
            GpuInfo.Builder builder = GpuInfo.builder("nvidia", 0).name("first");
            GpuInfo first = builder.build();

            builder.name("second").uuid("GPU-9").build();

            assertThat(first.getName()).contains("first");
            assertThat(first.getUuid()).isEmpty();
        }
    }

    @Nested
    @DisplayName("from(...) reads a GPU out of any ExternalResourceInfo")
    class From {

        @Test
        @DisplayName("our own instance comes back as is")
        void sameInstance() {
            GpuInfo gpu = fullH100();

            assertThat(GpuInfo.from(gpu)).isSameAs(gpu);
        }

        @Test
        @DisplayName("a foreign implementation with the same properties round-trips completely")
        void foreignRoundTrip() {
            GpuInfo gpu = fullH100();

            GpuInfo read = GpuInfo.from(new MapBackedInfo(gpu.asMap()));

            assertThat(read).isEqualTo(gpu);
            assertThat(read.asMap()).containsExactlyEntriesOf(gpu.asMap());
            assertThat(read.getMemoryBytes()).isEqualTo(gpu.getMemoryBytes());
            assertThat(read.getVisibleDevicesValue()).contains("GPU-5f9c0d1e");
        }

        @Test
        @DisplayName("an info without a kind property is read as long as the GPU properties are there")
        void withoutKind() {
            Map<String, String> props = new LinkedHashMap<>();
            props.put("vendor", "intel");
            props.put("index", "2");

            assertThat(GpuInfo.from(new MapBackedInfo(props)))
                    .isEqualTo(GpuInfo.builder("intel", 2).build());
        }

        @Test
        @DisplayName("a missing required property is named, with the keys that are there")
        void missingProperty() {
            // What Flink's own GPU plugin hands out: only an index.
            MapBackedInfo flinkGpuInfo = new MapBackedInfo(Map.of("index", "0"));

            assertThatThrownBy(() -> GpuInfo.from(flinkGpuInfo))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("Not a GpuInfo")
                    .hasMessageContaining("property 'vendor' is missing")
                    .hasMessageContaining(MapBackedInfo.class.getName())
                    .hasMessageContaining("[index]");
            assertThatThrownBy(() -> GpuInfo.from(MapBackedInfo.without(fullH100().asMap(), "index")))
                    .hasMessageContaining("property 'index' is missing");
        }

        @Test
        @DisplayName("a malformed number is named with its value")
        void malformedNumbers() {
            Map<String, String> props = fullH100().asMap();

            assertThatThrownBy(() -> GpuInfo.from(MapBackedInfo.with(props, "index", "first")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("property 'index'")
                    .hasMessageContaining("must be a whole number but is 'first'");
            assertThatThrownBy(() -> GpuInfo.from(MapBackedInfo.with(props, "index", "4294967296")))
                    .hasMessageContaining("'index' must be between 0 and 2^31-1 but is 4294967296");
            assertThatThrownBy(() -> GpuInfo.from(MapBackedInfo.with(props, "memory-bytes", "80GB")))
                    .hasMessageContaining("property 'memory-bytes'")
                    .hasMessageContaining("'80GB'");
        }

        @Test
        @DisplayName("an info of another kind is refused by its kind, not by a missing property")
        void otherKind() {
            FpgaInfo fpga = FpgaInfo.builder("Intel(R) FPGA SDK", 0, "pac_a10", 0).vendor("Intel").build();

            assertThatThrownBy(() -> GpuInfo.from(fpga))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("kind 'fpga'")
                    .hasMessageContaining("expected 'gpu'");
        }

        @Test
        @DisplayName("a lone visible-devices property is refused")
        void loneVisibleDevices() {
            Map<String, String> props = GpuInfo.builder("nvidia", 0).build().asMap();

            assertThatThrownBy(
                            () -> GpuInfo.from(MapBackedInfo.with(props, "visible-devices.env", "CUDA_VISIBLE_DEVICES")))
                    .hasMessageContaining("must be given together");
        }

        @Test
        @DisplayName("null is refused with a message")
        void nullInfo() {
            assertThatThrownBy(() -> GpuInfo.from(null))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("Cannot read a GpuInfo from null");
        }

        @Test
        @DisplayName("an implementation that returns null for a property is treated as not having it")
        void contractBreakingImplementation() {
            MapBackedInfo broken =
                    new MapBackedInfo(Map.of("vendor", "nvidia", "index", "0")) {
                        @Override
                        public Optional<String> getProperty(String key) {
                            return key.equals("uuid") ? null : super.getProperty(key);
                        }
                    };

            assertThat(GpuInfo.from(broken).getUuid()).isEmpty();
        }
    }
}
