package io.flinkdevices.sdk.health;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Locale;

/** A device's health as its monitor last saw it; the value of the {@code health} key. */
@PublicEvolving
public enum HealthState {
    /** The device works as expected. */
    OK,
    /** The device works but something is off (the monitor cannot sample it, a counter warns). */
    DEGRADED,
    /** The device cannot do its work (a port DOWN, a GPU gone): it leaves service. */
    FAILED;

    /** {@code ok}, {@code degraded} or {@code failed}: the value of the {@code health} key. */
    public String value() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The gauge value of this state: 0 ok, 1 degraded, 2 failed. */
    public int code() {
        return ordinal();
    }

    /**
     * Reads a {@code health} value.
     *
     * @throws IllegalArgumentException naming the value and the known ones
     */
    public static HealthState parse(String value) {
        for (HealthState s : values()) {
            if (s.value().equalsIgnoreCase(value == null ? "" : value.strip())) {
                return s;
            }
        }
        throw new IllegalArgumentException("health must be one of ok, degraded, failed but is '" + value + "'");
    }
}
