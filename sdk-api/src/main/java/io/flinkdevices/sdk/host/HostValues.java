package io.flinkdevices.sdk.host;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.internal.SysfsErrors;

import org.apache.flink.annotation.PublicEvolving;

import java.math.BigDecimal;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Checks a number or identifier that a tool, file or library reported of one device before a
 * driver makes a metric, a health decision or a property of it. A damaged or lying host answers
 * {@code NaN}, {@code Infinity}, {@code -5}, {@code 1e308} or {@code 18446744073709551615} (an
 * unsigned "unknown" read as a count); taken as numbers they become metrics no dashboard can
 * use, or a health decision that retires a good device for good. Each check refuses such a value
 * with one {@link DeviceDriverException} naming the source, the field, the device, the value and
 * what was expected; a monitor's sampler lets it escape, so that the monitor counts a failed
 * sample ({@code monitor.errors}; {@code degraded} after three) instead of a metric or a {@code
 * failed} device.
 *
 * <pre>{@code
 * HostValues gpu = HostValues.of("nvidia-smi (/usr/bin/nvidia-smi)", "GPU GPU-5f1c...");
 * double temp = gpu.number("temperature.gpu", "NaN", 0, HostValues.MAX_CELSIUS, "°C");
 * // throws: nvidia-smi (/usr/bin/nvidia-smi): temperature.gpu of GPU GPU-5f1c... is 'NaN';
 * //         expected a number from 0 to 200 °C
 * long dbe = gpu.count("ecc.errors.uncorrected.volatile.total", "3");
 * String uuid = gpu.identifier("uuid", "GPU-5f1c...");
 * }</pre>
 */
@PublicEvolving
public final class HostValues {

    /**
     * The highest temperature a device sensor can truly report, in degrees Celsius: silicon shuts
     * down near 125 °C; a sensor reading above this bound is broken, not hot.
     */
    public static final double MAX_CELSIUS = 200;

    /**
     * The most power a device can truly draw, in watts: ten times today's largest accelerator
     * module (about 1 kW); a reading above it is broken, not busy.
     */
    public static final double MAX_WATTS = 10_000;

    /**
     * The most memory a device can truly have, in bytes: 1 PiB, some three thousand times today's
     * largest accelerator memory (288 GB); a size above it is garbage, not a big device.
     */
    public static final long MAX_MEMORY_BYTES = 1L << 50;

    /** The upper bound of a utilisation, in percent. */
    public static final double PERCENT = 100;

    /**
     * The largest count accepted: a signed 64-bit value. The kernel and the vendor libraries count
     * in unsigned 64-bit values, whose all-ones value ({@code 18446744073709551615}) stands for
     * "unknown"; no real counter reaches 2<sup>63</sup>.
     */
    public static final long MAX_COUNT = Long.MAX_VALUE;

    /** The longest identifier accepted (NVML's UUID buffer holds 80 bytes, a sysfs attribute a page). */
    public static final int MAX_IDENTIFIER_LENGTH = 256;

    /**
     * A plain decimal number: what tools print. No {@code NaN}, {@code Infinity}, hex or {@code 1d}.
     * In a holder: discovery checks identifiers at TaskManager start and need not compile it.
     */
    private static final class Decimal {
        static final Pattern PATTERN = Pattern.compile("[+-]?\\d{1,30}(?:\\.\\d{1,30})?(?:[eE][+-]?\\d{1,4})?");
    }

    private final String source;
    private final String device;

    private HostValues(String source, String device) {
        this.source = Objects.requireNonNull(source, "source");
        this.device = Objects.requireNonNull(device, "device");
    }

    /**
     * The checks of the values that {@code source} reported of {@code device}.
     *
     * @param source the tool, file or library, as messages name it ({@code nvidia-smi (/usr/bin/nvidia-smi)})
     * @param device the device, as messages name it ({@code GPU GPU-5f1c...}, {@code port mlx5_0/1})
     */
    public static HostValues of(String source, String device) {
        return new HostValues(source, device);
    }

    /**
     * A number printed as text, within {@code min} to {@code max}.
     *
     * @param unit the unit after the bound in messages ({@code °C}, {@code %}, {@code W}); empty for none
     * @throws DeviceDriverException when {@code text} is not a plain decimal number (NaN, Infinity,
     *     a word) or is outside the bound
     */
    public double number(String field, String text, double min, double max, String unit) throws DeviceDriverException {
        String t = text == null ? "" : text.strip();
        if (!Decimal.PATTERN.matcher(t).matches()) {
            throw refused(field, t, range(min, max, unit));
        }
        double v = Double.parseDouble(t);
        if (!(v >= min && v <= max)) {
            throw refused(field, t, range(min, max, unit));
        }
        return v;
    }

    /**
     * A number a library returned, within {@code min} to {@code max}.
     *
     * @throws DeviceDriverException when it is NaN, infinite or outside the bound
     */
    public double number(String field, double value, double min, double max, String unit) throws DeviceDriverException {
        if (!(value >= min && value <= max)) {
            throw refused(field, plain(value), range(min, max, unit));
        }
        return value;
    }

    /**
     * A count printed as text: a whole number from 0 to {@link #MAX_COUNT}.
     *
     * @throws DeviceDriverException when it is not such a number ({@code -5}, {@code 1.5},
     *     {@code 18446744073709551615}, {@code 99999999999999999999}, random bytes)
     */
    public long count(String field, String text) throws DeviceDriverException {
        String t = text == null ? "" : text.strip();
        if (!t.isEmpty() && t.length() <= 19 && digitsOnly(t)) {
            try {
                return Long.parseLong(t);
            } catch (NumberFormatException e) {
                // above MAX_COUNT: refused below
            }
        }
        throw refused(field, t, countRange());
    }

    /**
     * A count a library returned as an unsigned 64-bit value (its bits in a {@code long}): 0 to
     * {@link #MAX_COUNT}; a value of 2<sup>63</sup> and above (a {@code long} below 0) is refused
     * and named unsigned ({@code 18446744073709551615}).
     *
     * @throws DeviceDriverException when it is above {@link #MAX_COUNT}
     */
    public long unsignedCount(String field, long bits) throws DeviceDriverException {
        if (bits < 0) {
            throw refused(field, Long.toUnsignedString(bits), countRange());
        }
        return bits;
    }

    /**
     * An identifier (a UUID, a serial, a name handed on in a visible-devices variable): printable,
     * without white space or control characters, 1 to {@link #MAX_IDENTIFIER_LENGTH} characters.
     * One with a line feed or a space would split into two entries of a variable a vendor runtime
     * reads, or name another device.
     *
     * @throws DeviceDriverException when it is empty, too long, or has a space or control character
     */
    public String identifier(String field, String value) throws DeviceDriverException {
        String v = value == null ? "" : value;
        String why = null;
        if (v.isEmpty()) {
            why = "it is empty";
        } else if (v.length() > MAX_IDENTIFIER_LENGTH) {
            why = "it has " + v.length() + " characters";
        } else {
            for (int i = 0; i < v.length() && why == null; i++) {
                char c = v.charAt(i);
                if (Character.isISOControl(c) || Character.isWhitespace(c) || Character.isSpaceChar(c)
                        || Character.getType(c) == Character.FORMAT) {
                    why = "it has " + describe(c) + " at position " + (i + 1);
                }
            }
        }
        if (why != null) {
            throw new DeviceDriverException(source + ": " + field + " of " + device + " is '" + SysfsErrors.abbreviate(v)
                    + "'; expected an identifier of 1 to " + MAX_IDENTIFIER_LENGTH
                    + " printable characters without spaces or control characters, but " + why);
        }
        return v;
    }

    private static String describe(char c) {
        switch (c) {
            case '\n':
                return "a line feed";
            case '\r':
                return "a carriage return";
            case '\t':
                return "a tab";
            case ' ':
                return "a space";
            default:
                return String.format("the character U+%04X", (int) c);
        }
    }

    private DeviceDriverException refused(String field, String value, String expected) {
        return new DeviceDriverException(source + ": " + field + " of " + device + " is '" + SysfsErrors.abbreviate(value)
                + "'; expected " + expected);
    }

    private static String countRange() {
        return "a whole number from 0 to " + MAX_COUNT;
    }

    private static String range(double min, double max, String unit) {
        return "a number from " + plain(min) + " to " + plain(max) + (unit == null || unit.isEmpty() ? "" : " " + unit);
    }

    /** {@code 100} rather than {@code 100.0}, {@code 1e308} spelled out as {@code Double} does past 10^7. */
    private static String plain(double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            return Double.toString(d);
        }
        if (d == Math.rint(d) && Math.abs(d) <= 9007199254740992d) { // 2^53: every whole number up to it is exact
            return Long.toString((long) d);
        }
        return BigDecimal.valueOf(d).stripTrailingZeros().toString();
    }

    private static boolean digitsOnly(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return "HostValues{" + source + ", " + device + "}";
    }
}
