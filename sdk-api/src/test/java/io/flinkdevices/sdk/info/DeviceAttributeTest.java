package io.flinkdevices.sdk.info;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** A driver's typed extra fields on the generic info: validated, listed, rebuilt from a copy. */
class DeviceAttributeTest {

    private static final DeviceAttribute<Long> NUMA_NODE = DeviceAttribute.number("numa.node", 0, 1023);
    private static final DeviceAttribute<String> COOLING = DeviceAttribute.oneOf("cooling", "air", "liquid");
    private static final DeviceAttribute<String> SERIAL = DeviceAttribute.text("serial");

    private static AcceleratorInfo npu(long node) {
        return AcceleratorInfo.builder("npu", "zeta", 1).uuid("npu-1001").set(NUMA_NODE, node).set(COOLING, "air").build();
    }

    @Test
    @DisplayName("a set field is listed in getKeys(), read typed, and an unset one is absent")
    void setFieldsAreListedAndTyped() {
        AcceleratorInfo info = npu(1);
        assertThat(info.getKeys()).contains("numa.node", "cooling").doesNotContain("serial");
        assertThat(info.getProperty("numa.node")).hasValue("1");
        assertThat(info.get(NUMA_NODE)).hasValue(1L);
        assertThat(info.get(COOLING)).hasValue("air");
        assertThat(info.get(SERIAL)).isEmpty();
    }

    @Test
    @DisplayName("the builder refuses a value outside the declared range or set, naming the key")
    void builderValidates() {
        AcceleratorInfo.Builder b = AcceleratorInfo.builder("npu", "zeta", 0);
        assertThatThrownBy(() -> b.set(NUMA_NODE, 4096L))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'numa.node'")
                .hasMessageContaining("a whole number from 0 to 1023")
                .hasMessageContaining("'4096'");
        assertThatThrownBy(() -> b.set(COOLING, "water")).hasMessageContaining("'cooling'").hasMessageContaining("[air, liquid]");
        assertThatThrownBy(() -> b.set(SERIAL, " ")).hasMessageContaining("'serial'");
        assertThatThrownBy(() -> b.set(SERIAL, null)).hasMessageContaining("'serial'");
    }

    @Test
    @DisplayName("from(info, kind, attributes) rebuilds the fields from a plain property copy and refuses one that does not parse")
    void rebuiltAcrossClassLoaders() {
        AcceleratorInfo copy = AcceleratorInfo.from(new MapBackedInfo(npu(7).asMap()), "npu", NUMA_NODE, COOLING);
        assertThat(copy.get(NUMA_NODE)).hasValue(7L);
        assertThat(copy).isEqualTo(npu(7));
        MapBackedInfo garbled = MapBackedInfo.with(npu(7).asMap(), "numa.node", "seven");
        assertThatThrownBy(() -> AcceleratorInfo.from(garbled, "npu", NUMA_NODE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'numa.node'")
                .hasMessageContaining("'seven'");
    }

    @Test
    @DisplayName("an attribute cannot take a standard key or a malformed one")
    void keysAreChecked() {
        assertThatThrownBy(() -> DeviceAttribute.text("uuid")).hasMessageContaining("'uuid'");
        assertThatThrownBy(() -> DeviceAttribute.text("Numa Node")).hasMessageContaining("'Numa Node'");
        assertThatThrownBy(() -> DeviceAttribute.number("n", 5, 1)).hasMessageContaining("min 5 is above max 1");
    }

    @Test
    @DisplayName("an attribute cannot take a live key: health and metrics come from the monitor")
    void liveKeysAreRefused() {
        for (String key : new String[] {"health", "health.reason", "metric.temperature"}) {
            assertThatThrownBy(() -> DeviceAttribute.oneOf(key, "ok", "failed"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("DeviceAttribute: '" + key + "' is a live key")
                    .hasMessageContaining("DeviceMonitor")
                    .hasMessageContaining(".live(...)");
        }
    }
}
