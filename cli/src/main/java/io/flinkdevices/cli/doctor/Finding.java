package io.flinkdevices.cli.doctor;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.Objects;

/**
 * One problem {@code doctor} found.
 *
 * @param severity error or warning
 * @param resource the resource it concerns, {@code null} for the plugins or the whole configuration
 * @param key the full configuration key to change, or the file or folder when no key is at fault
 * @param problem what is wrong, and what Flink does about it
 * @param fix what to change
 */
@JsonPropertyOrder({"severity", "resource", "key", "problem", "fix"})
public record Finding(Severity severity, String resource, String key, String problem, String fix) {

    public Finding {
        Objects.requireNonNull(severity);
        Objects.requireNonNull(key);
        Objects.requireNonNull(problem);
        Objects.requireNonNull(fix);
    }

    /** An {@link Severity#ERROR}. */
    public static Finding error(String resource, String key, String problem, String fix) {
        return new Finding(Severity.ERROR, resource, key, problem, fix);
    }

    /** A {@link Severity#WARNING}. */
    public static Finding warning(String resource, String key, String problem, String fix) {
        return new Finding(Severity.WARNING, resource, key, problem, fix);
    }
}
