package io.flinkdevices.cli.common;

import org.apache.flink.util.TimeUtils;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.time.Duration;

/**
 * Reads a duration the way Flink's configuration does: {@code 30 s}, {@code 2min}, {@code 500ms}.
 */
public final class DurationConverter implements ITypeConverter<Duration> {

    @Override
    public Duration convert(String value) {
        final Duration duration;
        try {
            duration = TimeUtils.parseDuration(value);
        } catch (RuntimeException e) {
            throw new TypeConversionException(
                    "'" + value + "' is not a duration (for example 30 s, 2 min, 500 ms)");
        }
        if (duration.isNegative() || duration.isZero()) {
            throw new TypeConversionException("'" + value + "' is not a positive duration");
        }
        return duration;
    }
}
