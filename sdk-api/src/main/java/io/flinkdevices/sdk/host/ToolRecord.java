package io.flinkdevices.sdk.host;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.internal.JsonReader;
import io.flinkdevices.sdk.host.internal.SysfsErrors;

import org.apache.flink.annotation.PublicEvolving;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * A part of a vendor tool's output ({@link ToolOutput}): a JSON object, list or value, or one line
 * of CSV, with checked getters. Every getter names what is wrong in one {@link
 * DeviceDriverException}: the tool, the field, the device and what was expected, so that a driver
 * needs no check of its own ({@code hexa-smi list --json: memory.total_bytes of card 2 is '16 GB';
 * expected a whole number from 0 to 1125899906842624}).
 *
 * <p>A field is named by its key, or by a path of keys joined by dots ({@code asic.market_name});
 * a key that itself holds a dot is found as it is. A field is <em>unknown</em> when it is missing,
 * JSON {@code null}, empty, or a tool's word for "no value": {@code N/A}, {@code [N/A]}, {@code
 * [Not Supported]} (any case). The {@code optional...} getters answer empty for an unknown field
 * and refuse a present but wrong one; the others refuse both.
 *
 * <pre>{@code
 * for (ToolRecord entry : ToolOutput.json("hexa-smi list --json", stdout).list("cards")) {
 *     ToolRecord card = entry.forDevice("card " + entry.whole("index", 0, 1023));
 *     String serial = card.identifier("serial");
 *     OptionalLong numa = card.optionalWhole("numa_node", 0, 1023);
 * }
 * }</pre>
 */
@PublicEvolving
public final class ToolRecord {

    private static final Pattern WHOLE = Pattern.compile("[+-]?\\d{1,19}");
    private static final Object MISSING = new Object();

    private final String tool;
    private final String device;
    private final Object value;

    private ToolRecord(String tool, String device, Object value) {
        this.tool = tool;
        this.device = device;
        this.value = value;
    }

    /** The whole output of {@code tool}: {@code value} as {@link JsonReader} reads it. */
    static ToolRecord root(String tool, Object value) {
        return new ToolRecord(tool, "the output", value);
    }

    /** One line of CSV, its fields by column name. */
    static ToolRecord row(String tool, String device, Map<String, Object> fields) {
        return new ToolRecord(tool, device, fields);
    }

    /** The tool, as messages name it. */
    public String tool() {
        return tool;
    }

    /** The device, as messages name it: {@code the output}, {@code entry 2}, {@code line 3} until {@link #forDevice} names it. */
    public String device() {
        return device;
    }

    /**
     * This record, its messages naming {@code device} ({@code card 2}, {@code GPU 0000:05:00.0}):
     * once a driver has read a device's index or address, a bad field names the device, not its
     * place in the output.
     */
    public ToolRecord forDevice(String device) {
        return new ToolRecord(tool, device, value);
    }

    /** Whether this is a JSON object or a CSV line. */
    public boolean isObject() {
        return value instanceof Map;
    }

    /** Whether this is a JSON list. */
    public boolean isList() {
        return value instanceof List;
    }

    /** Whether {@code field} is a JSON object. */
    public boolean isObject(String field) {
        return find(field) instanceof Map;
    }

    /** Whether {@code field} is a JSON list. */
    public boolean isList(String field) {
        return find(field) instanceof List;
    }

    /** Whether {@code field} has a value: it is there and not unknown. */
    public boolean has(String field) {
        return !unknown(find(field));
    }

    /** The keys of this object in the tool's order (the columns of a CSV line); empty for a list or value. */
    public List<String> fields() {
        return isObject() ? List.copyOf(map().keySet()) : List.of();
    }

    /**
     * The entries of this object, each named by its key as its device ({@code {"card0": {...},
     * "card1": {...}}}).
     *
     * @throws DeviceDriverException when this is not an object
     */
    public Map<String, ToolRecord> entries() throws DeviceDriverException {
        if (!isObject()) {
            throw new DeviceDriverException(tool + ": " + device + " is " + kind(value) + "; expected an object");
        }
        Map<String, ToolRecord> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : map().entrySet()) {
            out.put(e.getKey(), new ToolRecord(tool, e.getKey(), e.getValue()));
        }
        return Collections.unmodifiableMap(out);
    }

    /**
     * The elements of this list, named {@code entry 0}, {@code entry 1}, ...
     *
     * @throws DeviceDriverException when this is not a list
     */
    public List<ToolRecord> elements() throws DeviceDriverException {
        if (!isList()) {
            throw new DeviceDriverException(tool + ": " + device + " is " + kind(value) + "; expected a list");
        }
        return elements(value, "entry ");
    }

    /**
     * The elements of the list {@code field}, named {@code <field>[0]}, {@code <field>[1]}, ...
     *
     * @throws DeviceDriverException when the field is missing or not a list
     */
    public List<ToolRecord> list(String field) throws DeviceDriverException {
        Object v = find(field);
        if (!(v instanceof List)) {
            throw refused(field, v, "a list");
        }
        return elements(v, (device.equals("the output") ? "" : device + " ") + field + "[");
    }

    /**
     * The object {@code field}, named as this record's device.
     *
     * @throws DeviceDriverException when the field is missing or not an object
     */
    public ToolRecord object(String field) throws DeviceDriverException {
        Object v = find(field);
        if (!(v instanceof Map)) {
            throw refused(field, v, "an object");
        }
        return new ToolRecord(tool, device, v);
    }

    /**
     * The text of {@code field} (a number or {@code true}/{@code false} as printed), stripped.
     *
     * @throws DeviceDriverException when it is unknown, an object or a list
     */
    public String text(String field) throws DeviceDriverException {
        return optionalText(field).orElseThrow(() -> refused(field, find(field), "a text"));
    }

    /**
     * The text of {@code field}, stripped; empty when it is unknown.
     *
     * @throws DeviceDriverException when it is an object or a list
     */
    public Optional<String> optionalText(String field) throws DeviceDriverException {
        Object v = find(field);
        if (unknown(v)) {
            return Optional.empty();
        }
        if (v instanceof Map || v instanceof List) {
            throw refused(field, v, "a text");
        }
        return Optional.of(v.toString().strip());
    }

    /**
     * An identifier (a UUID, a serial): see {@link HostValues#identifier}.
     *
     * @throws DeviceDriverException when it is unknown or not an identifier
     */
    public String identifier(String field) throws DeviceDriverException {
        return values().identifier(field, optionalText(field).orElseThrow(() -> refused(field, find(field), "an identifier")));
    }

    /**
     * A whole number from {@code min} to {@code max}, printed as a JSON number or as text.
     *
     * @throws DeviceDriverException when it is unknown, not a whole number or outside the bound
     */
    public long whole(String field, long min, long max) throws DeviceDriverException {
        return optionalWhole(field, min, max).orElseThrow(() -> refused(field, find(field), wholeRange(min, max)));
    }

    /**
     * A whole number from {@code min} to {@code max}; empty when it is unknown.
     *
     * @throws DeviceDriverException when it is there but not a whole number within the bound
     */
    public OptionalLong optionalWhole(String field, long min, long max) throws DeviceDriverException {
        Optional<String> t = optionalText(field);
        if (t.isEmpty()) {
            return OptionalLong.empty();
        }
        String s = t.get();
        if (WHOLE.matcher(s).matches()) {
            try {
                long v = Long.parseLong(s.startsWith("+") ? s.substring(1) : s);
                if (v >= min && v <= max) {
                    return OptionalLong.of(v);
                }
            } catch (NumberFormatException e) {
                // beyond a long: refused below
            }
        }
        throw refused(field, find(field), wholeRange(min, max));
    }

    /**
     * A decimal number from {@code min} to {@code max}: see {@link HostValues#number(String, String, double, double, String)}.
     *
     * @param unit the unit after the bound in messages ({@code °C}, {@code %}); empty for none
     * @throws DeviceDriverException when it is unknown, not a plain decimal number or outside the bound
     */
    public double number(String field, double min, double max, String unit) throws DeviceDriverException {
        Optional<String> t = optionalText(field);
        if (t.isPresent()) {
            return values().number(field, t.get(), min, max, unit);
        }
        Object v = find(field);
        if (v == MISSING) {
            throw refused(field, v, "a number");
        }
        return values().number(field, String.valueOf(v), min, max, unit); // null, N/A: refused with the bound
    }

    /**
     * A decimal number from {@code min} to {@code max}; empty when it is unknown.
     *
     * @throws DeviceDriverException when it is there but not a plain decimal number within the bound
     */
    public OptionalDouble optionalNumber(String field, double min, double max, String unit) throws DeviceDriverException {
        Optional<String> t = optionalText(field);
        return t.isEmpty() ? OptionalDouble.empty() : OptionalDouble.of(values().number(field, t.get(), min, max, unit));
    }

    private HostValues values() {
        return HostValues.of(tool, device);
    }

    private List<ToolRecord> elements(Object list, String prefix) {
        List<?> l = (List<?>) list;
        List<ToolRecord> out = new ArrayList<>(l.size());
        boolean bracket = prefix.endsWith("[");
        for (int i = 0; i < l.size(); i++) {
            out.add(new ToolRecord(tool, prefix + i + (bracket ? "]" : ""), l.get(i)));
        }
        return Collections.unmodifiableList(out);
    }

    /** The value at {@code field}: the key as it is first, then a dotted path; {@link #MISSING} when none. */
    private Object find(String field) {
        Object at = value;
        String rest = field;
        while (true) {
            if (!(at instanceof Map)) {
                return MISSING;
            }
            Map<?, ?> m = (Map<?, ?>) at;
            if (m.containsKey(rest)) {
                return m.get(rest);
            }
            int dot = rest.indexOf('.');
            if (dot < 0) {
                return MISSING;
            }
            at = m.containsKey(rest.substring(0, dot)) ? m.get(rest.substring(0, dot)) : MISSING;
            rest = rest.substring(dot + 1);
        }
    }

    private static boolean unknown(Object v) {
        if (v == MISSING || v == JsonReader.NULL || v == null) {
            return true;
        }
        if (!(v instanceof String)) {
            return false;
        }
        String s = ((String) v).strip().toLowerCase(Locale.ROOT);
        return s.isEmpty() || s.equals("n/a") || s.equals("[n/a]") || s.equals("[not supported]");
    }

    private DeviceDriverException refused(String field, Object v, String expected) {
        if (v == MISSING) {
            String has = isObject() ? " (it has " + abbreviateList(map().keySet()) + ")" : "";
            return new DeviceDriverException(tool + ": " + device + " has no field " + field + has + "; expected " + expected);
        }
        String shown = v instanceof Map || v instanceof List ? kind(v) : "'" + SysfsErrors.abbreviate(String.valueOf(v)) + "'";
        return new DeviceDriverException(tool + ": " + field + " of " + device + " is " + shown + "; expected " + expected);
    }

    private static String wholeRange(long min, long max) {
        return "a whole number from " + min + " to " + max;
    }

    private static String kind(Object v) {
        if (v instanceof Map) {
            return "an object";
        }
        if (v instanceof List) {
            return "a list";
        }
        return "'" + SysfsErrors.abbreviate(String.valueOf(v)) + "'";
    }

    private static String abbreviateList(java.util.Collection<String> keys) {
        String s = String.join(", ", keys);
        return s.isEmpty() ? "no fields" : SysfsErrors.abbreviate(s);
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> map() {
        return (Map<String, Object>) value;
    }

    @Override
    public String toString() {
        return "ToolRecord{" + tool + ", " + device + "}";
    }
}
