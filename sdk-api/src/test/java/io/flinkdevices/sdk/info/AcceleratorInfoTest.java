package io.flinkdevices.sdk.info;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The generic info a new kind of device uses keeps the contract of the SDK's infos. */
class AcceleratorInfoTest {

    private static AcceleratorInfo stick() {
        return AcceleratorInfo.builder("tensor-stick", "Acme", 3)
                .uuid("ATS-5f9c0003")
                .name("Acme Tensor Stick 16G")
                .memoryBytes(16L << 30)
                .pciAddress("0000:3e:00.0")
                .visibleDevices("ACME_VISIBLE_DEVICES", "3")
                .extra("firmware", "1.4.2")
                .build();
    }

    @Test
    @DisplayName("lists exactly its properties, standard ones first, extras after, and the getters read the same")
    void propertiesMirrorGetters() {
        AcceleratorInfo info = stick();
        assertThat(info.asMap())
                .containsExactly(
                        Map.entry("kind", "tensor-stick"),
                        Map.entry("vendor", "acme"),
                        Map.entry("index", "3"),
                        Map.entry("uuid", "ATS-5f9c0003"),
                        Map.entry("name", "Acme Tensor Stick 16G"),
                        Map.entry("memory-bytes", Long.toString(16L << 30)),
                        Map.entry("pci-address", "0000:3e:00.0"),
                        Map.entry("visible-devices.env", "ACME_VISIBLE_DEVICES"),
                        Map.entry("visible-devices.value", "3"),
                        Map.entry("firmware", "1.4.2"));
        assertThat(info.getKeys()).containsExactlyElementsOf(info.asMap().keySet());
        assertThat(info.getExtra("firmware")).hasValue("1.4.2");
        assertThat(info.getMemoryBytes()).hasValue(16L << 30);
        assertThat(info.getProperty("no-such-key")).isEmpty();
        assertThat(AcceleratorInfo.builder("npu", "acme", 0).build().getKeys())
                .containsExactly("kind", "vendor", "index");
    }

    @Test
    @DisplayName("is rebuilt equal, extras included, from a plain property copy as job code sees it")
    void roundTripThroughForeignInfo() {
        AcceleratorInfo info = stick();
        AcceleratorInfo back = AcceleratorInfo.from(new MapBackedInfo(new LinkedHashMap<>(info.asMap())), "tensor-stick");
        assertThat(back).isEqualTo(info).hasSameHashCodeAs(info);
        assertThat(back.asMap()).isEqualTo(info.asMap());
    }

    @Test
    @DisplayName("reads a GPU's info as a generic one, and refuses another kind by name")
    void kinds() {
        GpuInfo gpu = GpuInfo.builder("nvidia", 1).architecture("sm_90").build();
        AcceleratorInfo generic = AcceleratorInfo.from(new MapBackedInfo(gpu.asMap()));
        assertThat(generic.getKind()).isEqualTo("gpu");
        assertThat(generic.getExtras()).containsExactly(Map.entry("architecture", "sm_90"));
        assertThatThrownBy(() -> AcceleratorInfo.from(new MapBackedInfo(gpu.asMap()), "npu"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'gpu'")
                .hasMessageContaining("'npu'");
        assertThatThrownBy(() -> AcceleratorInfo.from(new MapBackedInfo(Map.of("vendor", "acme", "index", "0"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'kind' is missing");
    }

    @Test
    @DisplayName("rejects a bad kind, a blank extra and an extra that shadows a standard key")
    void validation() {
        assertThatThrownBy(() -> AcceleratorInfo.builder("Tensor Stick", "acme", 0).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("kind");
        assertThatThrownBy(() -> AcceleratorInfo.builder("npu", "acme", 0).extra("serial", " "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'serial' must not be blank");
        assertThatThrownBy(() -> AcceleratorInfo.builder("npu", "acme", 0).extra("uuid", "x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'uuid'");
        assertThatThrownBy(() -> AcceleratorInfo.builder("npu", "acme", -1).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("index");
        assertThatThrownBy(() -> AcceleratorInfo.builder("npu", "acme", 0).visibleDevices("NPU_VISIBLE", null).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("together");
    }

    @Test
    @DisplayName("refuses a live key as an extra, pointing to the monitor: getKeys() would list it and getProperty() hide it")
    void liveKeysAreNoExtras() {
        for (String key : new String[] {"health", "health.since", "metric.temperature"}) {
            assertThatThrownBy(() -> AcceleratorInfo.builder("npu", "acme", 0).extra(key, "50"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("AcceleratorInfo.Builder.extra: '" + key + "' is a live key")
                    .hasMessageContaining("DeviceMonitor")
                    .hasMessageContaining(".live(...)")
                    .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThanOrEqualTo(200));
        }
        assertThat(AcceleratorInfo.builder("npu", "acme", 0).extra("healthy.fans", "4").build().getExtra("healthy.fans"))
                .as("a key that only starts like a live one").hasValue("4");
    }

    @Test
    @DisplayName("cannot be changed through its keys or extras, and survives Java serialization")
    void immutableAndSerializable() throws Exception {
        AcceleratorInfo info = stick();
        assertThatThrownBy(() -> info.getKeys().clear()).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> info.getExtras().put("x", "y")).isInstanceOf(UnsupportedOperationException.class);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(info);
        }
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            AcceleratorInfo back = (AcceleratorInfo) in.readObject();
            assertThat(back).isEqualTo(info);
            assertThat(back.asMap()).isEqualTo(info.asMap());
        }
    }
}
