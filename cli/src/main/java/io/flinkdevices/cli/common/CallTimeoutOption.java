package io.flinkdevices.cli.common;

import picocli.CommandLine.Option;

import java.time.Duration;

/**
 * {@code --timeout}: how long one factory, driver or decorator call may take before the command
 * reports it as hanging, shared by every subcommand that creates drivers.
 */
public final class CallTimeoutOption {

    @Option(
            names = "--timeout",
            paramLabel = "DURATION",
            defaultValue = "60 s",
            converter = DurationConverter.class,
            description =
                    "Longest wait for one factory, driver or decorator call (default:"
                            + " ${DEFAULT-VALUE}).")
    Duration timeout;

    /** The longest wait for one call. */
    public Duration get() {
        return timeout;
    }
}
