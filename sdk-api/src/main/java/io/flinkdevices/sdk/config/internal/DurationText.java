package io.flinkdevices.sdk.config.internal;

import org.apache.flink.util.TimeUtils;

import java.time.Duration;
import java.util.regex.Pattern;

/**
 * Durations in the words of Flink's syntax, for the messages about a duration parameter: the
 * accepted range ({@code from 1 ms to 1 d}) and whether a value that did not parse was a number
 * too large rather than a typo.
 */
public final class DurationText {

    // Compiled on first use: a factory whose durations all parse never needs it.
    private static final class Holder {
        static final Pattern NUMBER_AND_UNIT = Pattern.compile("\\d+\\s*(\\S*)");
    }

    private DurationText() {}

    /** {@code expected a duration from 1 ms to 1 d but got '<value>'}. */
    public static String outOfRange(String value, Duration min, Duration max) {
        return "expected a duration from " + describe(min) + " to " + describe(max) + " but got '" + value + "'";
    }

    /** A number and a unit Flink knows, too large for a {@link Duration} ({@code 99999999999999999 d}). */
    public static boolean tooLargeForDuration(String value) {
        java.util.regex.Matcher m = Holder.NUMBER_AND_UNIT.matcher(value);
        if (!m.matches()) {
            return false;
        }
        try {
            TimeUtils.parseDuration("1" + m.group(1));
            return true;
        } catch (RuntimeException unknownUnit) {
            return false;
        }
    }

    /** {@code 1 ms}, {@code 10 s}, {@code 1 d}: the largest whole unit, in Flink's syntax. */
    public static String describe(Duration d) {
        if (d.toDays() > 0 && d.equals(Duration.ofDays(d.toDays()))) {
            return d.toDays() + " d";
        }
        if (d.toHours() > 0 && d.equals(Duration.ofHours(d.toHours()))) {
            return d.toHours() + " h";
        }
        if (d.toMinutes() > 0 && d.equals(Duration.ofMinutes(d.toMinutes()))) {
            return d.toMinutes() + " min";
        }
        if (d.getSeconds() > 0 && d.equals(Duration.ofSeconds(d.getSeconds()))) {
            return d.getSeconds() + " s";
        }
        return d.toMillis() + " ms";
    }
}
