package io.flinkdevices.testkit.fake;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * What a fake device really is, in fixed units: memory in bytes, temperature in degrees Celsius,
 * utilisation in percent, its PCI address and its NUMA node (or none). A fake host declares one
 * per device ({@link FakeHost#declareTruth(int, DeviceTruth)}), from the same values its fakes
 * write in the vendor's own units (MiB in a tool's CSV, millidegrees in a sysfs file), and the
 * contract kit compares what the driver reports with it, naming a unit mistake (a value off by
 * 1000, 1024 or 1048576) as such.
 *
 * <pre>{@code
 * host.declareTruth(i, DeviceTruth.of("uuid", uuid(i))
 *         .memoryBytes(32768L << 20)        // the tool prints 32768 (MiB)
 *         .temperatureCelsius(41)           // sysfs holds 41000 (millidegrees)
 *         .pciAddress("0000:07:00.0")
 *         .noNumaNode());                   // numa_node holds -1
 * }</pre>
 *
 * <p>Each fact is in one of three states: not declared (the kit does not check it), a value, or
 * declared absent ({@link #without(Fact)}: the device has none, and the driver must report none,
 * not a 0). Immutable: every method returns a copy.
 */
@PublicEvolving
public final class DeviceTruth {

    /** A fact about a device, in the unit its name says. */
    @PublicEvolving
    public enum Fact {
        /** Total memory, in bytes. */
        MEMORY_BYTES("memory", "bytes"),
        /** Temperature, in degrees Celsius. */
        TEMPERATURE_CELSIUS("temperature", "°C"),
        /** Utilisation, in percent (0 to 100). */
        UTILIZATION_PERCENT("utilisation", "percent"),
        /** PCI address, {@code domain:bus:device.function} ({@code 0000:07:00.0}). */
        PCI_ADDRESS("PCI address", ""),
        /** NUMA node, a number from 0. */
        NUMA_NODE("NUMA node", "");

        private final String label;
        private final String unit;

        Fact(String label, String unit) {
            this.label = label;
            this.unit = unit;
        }

        /** How messages name it: {@code memory}, {@code NUMA node}. */
        public String label() {
            return label;
        }

        /** Its unit as messages write it ({@code bytes}, {@code °C}); empty for an address or a node. */
        public String unit() {
            return unit;
        }
    }

    private final Map<String, String> identity;
    private final Map<Fact, Object> values;
    /** Always an EnumSet, so that copyOf works on an empty one too. */
    private final EnumSet<Fact> absent;

    private DeviceTruth(Map<String, String> identity, Map<Fact, Object> values, EnumSet<Fact> absent) {
        this.identity = identity;
        this.values = values;
        this.absent = absent;
    }

    /**
     * The truth of the device whose info has property {@code key} set to {@code value} (its
     * {@code uuid}, say), with no fact declared yet.
     */
    public static DeviceTruth of(String key, String value) {
        return of(Map.of(key, value));
    }

    /**
     * The truth of the device whose info has every property of {@code identity} (an RDMA port:
     * {@code device} and {@code port}), with no fact declared yet.
     */
    public static DeviceTruth of(Map<String, String> identity) {
        if (identity == null || identity.isEmpty()) {
            throw new IllegalArgumentException("A device truth names its device by at least one property, but none was given");
        }
        identity.forEach((k, v) -> {
            if (k == null || k.isBlank() || v == null || v.isBlank()) {
                throw new IllegalArgumentException("A device truth names its device by non-blank properties, not " + identity);
            }
        });
        return new DeviceTruth(Collections.unmodifiableMap(new LinkedHashMap<>(identity)), new EnumMap<>(Fact.class),
                EnumSet.noneOf(Fact.class));
    }

    /** The properties that name the device in its info. */
    public Map<String, String> identity() {
        return identity;
    }

    /** With total memory {@code bytes} (0 or more). */
    public DeviceTruth memoryBytes(long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("A memory size is 0 bytes or more, not " + bytes);
        }
        return with(Fact.MEMORY_BYTES, bytes);
    }

    /** With temperature {@code celsius} degrees Celsius. */
    public DeviceTruth temperatureCelsius(double celsius) {
        return with(Fact.TEMPERATURE_CELSIUS, finite(celsius, "temperature"));
    }

    /** With utilisation {@code percent} (0 to 100). */
    public DeviceTruth utilizationPercent(double percent) {
        if (!(percent >= 0 && percent <= 100)) {
            throw new IllegalArgumentException("A utilisation is 0 to 100 percent, not " + percent);
        }
        return with(Fact.UTILIZATION_PERCENT, percent);
    }

    /** With PCI address {@code address} ({@code 0000:07:00.0}; the kit compares it case-insensitively). */
    public DeviceTruth pciAddress(String address) {
        if (address == null || address.isBlank()) {
            throw new IllegalArgumentException("A PCI address is not blank");
        }
        return with(Fact.PCI_ADDRESS, address);
    }

    /** On NUMA node {@code node} (0 or more). */
    public DeviceTruth numaNode(int node) {
        if (node < 0) {
            throw new IllegalArgumentException("A NUMA node is 0 or more, not " + node + "; for none use noNumaNode()");
        }
        return with(Fact.NUMA_NODE, node);
    }

    /** On no NUMA node (a {@code numa_node} of -1, a tool that prints none): the driver must report none. */
    public DeviceTruth noNumaNode() {
        return without(Fact.NUMA_NODE);
    }

    /** Without {@code fact} (a tool that prints {@code N/A}, a file that is missing): the driver must report none. */
    public DeviceTruth without(Fact fact) {
        Map<Fact, Object> v = new EnumMap<>(values);
        v.remove(Objects.requireNonNull(fact, "fact"));
        EnumSet<Fact> a = EnumSet.copyOf(absent);
        a.add(fact);
        return new DeviceTruth(identity, v, a);
    }

    /** Whether {@code fact} is declared, as a value or as absent. */
    public boolean declares(Fact fact) {
        return values.containsKey(fact) || absent.contains(fact);
    }

    /** Whether {@code fact} is declared absent. */
    public boolean declaresAbsent(Fact fact) {
        return absent.contains(fact);
    }

    /** The value of {@code fact} as a number or text; empty when not declared or absent. */
    public Optional<Object> value(Fact fact) {
        return Optional.ofNullable(values.get(fact));
    }

    /** Total memory in bytes; empty when not declared or absent. */
    public OptionalLong memoryBytes() {
        Object v = values.get(Fact.MEMORY_BYTES);
        return v == null ? OptionalLong.empty() : OptionalLong.of((Long) v);
    }

    /** Temperature in degrees Celsius; empty when not declared or absent. */
    public OptionalDouble temperatureCelsius() {
        Object v = values.get(Fact.TEMPERATURE_CELSIUS);
        return v == null ? OptionalDouble.empty() : OptionalDouble.of((Double) v);
    }

    /** Utilisation in percent; empty when not declared or absent. */
    public OptionalDouble utilizationPercent() {
        Object v = values.get(Fact.UTILIZATION_PERCENT);
        return v == null ? OptionalDouble.empty() : OptionalDouble.of((Double) v);
    }

    /** PCI address; empty when not declared or absent. */
    public Optional<String> pciAddress() {
        return Optional.ofNullable((String) values.get(Fact.PCI_ADDRESS));
    }

    /** NUMA node; empty when not declared or absent ({@link #declaresAbsent}). */
    public OptionalInt numaNode() {
        Object v = values.get(Fact.NUMA_NODE);
        return v == null ? OptionalInt.empty() : OptionalInt.of((Integer) v);
    }

    private DeviceTruth with(Fact fact, Object value) {
        Map<Fact, Object> v = new EnumMap<>(values);
        v.put(fact, value);
        EnumSet<Fact> a = EnumSet.copyOf(absent);
        a.remove(fact);
        return new DeviceTruth(identity, v, a);
    }

    private static double finite(double v, String what) {
        if (!Double.isFinite(v)) {
            throw new IllegalArgumentException("A " + what + " is a finite number, not " + v);
        }
        return v;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DeviceTruth
                && identity.equals(((DeviceTruth) o).identity)
                && values.equals(((DeviceTruth) o).values)
                && absent.equals(((DeviceTruth) o).absent);
    }

    @Override
    public int hashCode() {
        return Objects.hash(identity, values, absent);
    }

    @Override
    public String toString() {
        return "DeviceTruth" + identity + values + (absent.isEmpty() ? "" : " without " + absent);
    }
}
