package io.flinkdevices.cli.common;

import io.flinkdevices.sdk.config.DriverParams;

import org.apache.flink.util.TimeUtils;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.time.Duration;

/**
 * Reads a duration the way Flink's configuration does: {@code 30 s}, {@code 2min}, {@code 500ms};
 * in the range a driver parameter accepts ({@link DriverParams#MIN_DURATION} to {@link
 * DriverParams#MAX_DURATION}).
 */
public final class DurationConverter implements ITypeConverter<Duration> {

    @Override
    public Duration convert(String value) {
        String range =
                "from "
                        + TimeUtils.formatWithHighestUnit(DriverParams.MIN_DURATION)
                        + " to "
                        + TimeUtils.formatWithHighestUnit(DriverParams.MAX_DURATION);
        final Duration duration;
        try {
            duration = TimeUtils.parseDuration(value);
        } catch (RuntimeException e) {
            throw new TypeConversionException(
                    "'" + value + "' is not a duration " + range + " (for example 30 s, 2 min, 500 ms)");
        }
        if (duration.compareTo(DriverParams.MIN_DURATION) < 0 || duration.compareTo(DriverParams.MAX_DURATION) > 0) {
            throw new TypeConversionException("'" + value + "' is not a duration " + range);
        }
        return duration;
    }
}
