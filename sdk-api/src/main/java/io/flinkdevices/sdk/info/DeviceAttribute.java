package io.flinkdevices.sdk.info;

import org.apache.flink.annotation.PublicEvolving;

import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * A typed extra field of an {@link AcceleratorInfo} (a NUMA node, a board revision, a vendor
 * serial), declared once as a constant of the driver and used on both sides of the plugin
 * boundary:
 *
 * <pre>{@code
 * static final DeviceAttribute<Long> NUMA_NODE = DeviceAttribute.number("numa.node", 0, 1023);
 * static final DeviceAttribute<String> COOLING = DeviceAttribute.oneOf("cooling", "air", "liquid");
 * // in the driver
 * AcceleratorInfo.builder("npu", "zeta", 0).set(NUMA_NODE, 1L).set(COOLING, "air").build();
 * // in a job, on the copy a plugin class loader created
 * AcceleratorInfo npu = AcceleratorInfo.from(info, "npu", NUMA_NODE, COOLING);
 * long node = npu.get(NUMA_NODE).orElse(0L);
 * }</pre>
 *
 * <p>An attribute is fixed at hand-out: a key of the live namespace ({@code health}, {@code
 * health.*}, {@code metric.*}; see {@link LiveProperties}) is refused, since a task reads those
 * from the driver's monitor.
 *
 * <p>The value is stored as an extra property under {@link #key()}, so {@code getKeys()} lists
 * it exactly when it is set and every tool that reads properties sees it; the builder rejects a
 * value outside the declared range or set, and {@code from(info, kind, attributes...)} rejects a
 * property that does not parse, each naming the key. Immutable and thread-safe.
 *
 * @param <T> the Java type job code reads
 */
@PublicEvolving
public final class DeviceAttribute<T> {

    private static final Pattern KEY = Pattern.compile("[a-z][a-z0-9._-]{0,127}");

    private final String key;
    private final String expected;
    private final Function<String, T> parser;
    private final Function<T, String> formatter;

    private DeviceAttribute(String key, String expected, Function<String, T> parser, Function<T, String> formatter) {
        if (LiveProperties.isLiveKey(key)) {
            throw new IllegalArgumentException(AcceleratorInfo.liveKeyRefused("DeviceAttribute", key));
        }
        if (key == null || !KEY.matcher(key).matches() || AcceleratorInfo.STANDARD_KEYS.contains(key)) {
            throw new IllegalArgumentException("A device attribute's key is lower-case letters, digits, '.', '_' and"
                    + " '-', starting with a letter, other than " + AcceleratorInfo.STANDARD_KEYS + ", but was '" + key + "'");
        }
        this.key = key;
        this.expected = expected;
        this.parser = parser;
        this.formatter = formatter;
    }

    /** A whole number from {@code min} to {@code max}, for example a NUMA node or a temperature limit. */
    public static DeviceAttribute<Long> number(String key, long min, long max) {
        if (min > max) {
            throw new IllegalArgumentException("Device attribute '" + key + "': min " + min + " is above max " + max);
        }
        String expected = "a whole number from " + min + " to " + max;
        return new DeviceAttribute<>(key, expected, s -> {
            long v;
            try {
                v = Long.parseLong(s);
            } catch (NumberFormatException e) {
                return null;
            }
            return v >= min && v <= max ? v : null;
        }, String::valueOf);
    }

    /** One of {@code values} (exact spelling), for example a health state. */
    public static DeviceAttribute<String> oneOf(String key, String... values) {
        List<String> allowed = List.of(values);
        if (allowed.isEmpty() || allowed.stream().anyMatch(String::isBlank)) {
            throw new IllegalArgumentException("Device attribute '" + key + "' needs non-blank values, got " + allowed);
        }
        return new DeviceAttribute<>(key, "one of " + allowed, s -> allowed.contains(s) ? s : null, s -> s);
    }

    /** Any text without line breaks, for example a vendor serial or a firmware version. */
    public static DeviceAttribute<String> text(String key) {
        return new DeviceAttribute<>(key, "non-blank text on one line",
                s -> s.isBlank() || s.contains("\n") || s.contains("\r") ? null : s.strip(), String::strip);
    }

    /** The property key the value is stored under. */
    public String key() {
        return key;
    }

    /** What a valid value looks like, as error messages say it. */
    public String expected() {
        return expected;
    }

    /**
     * The property text of {@code value}.
     *
     * @throws IllegalArgumentException naming the key when the value is not valid
     */
    String format(T value) {
        Objects.requireNonNull(value, () -> "Device attribute '" + key + "' needs a value");
        String text = formatter.apply(value);
        parse(text, "the value set by the driver");
        return text;
    }

    /**
     * The value of property text {@code text}.
     *
     * @throws IllegalArgumentException naming the key, what was expected and {@code where}
     */
    T parse(String text, String where) {
        T value = text == null ? null : parser.apply(text);
        if (value == null) {
            throw new IllegalArgumentException("Device attribute '" + key + "' must be " + expected
                    + " but " + where + " is '" + text + "'");
        }
        return value;
    }

    @Override
    public String toString() {
        return key + " (" + expected + ")";
    }
}
