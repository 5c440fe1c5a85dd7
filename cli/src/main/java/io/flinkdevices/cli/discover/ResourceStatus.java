package io.flinkdevices.cli.discover;

import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;

/** The outcome for one resource listed in {@code external-resources}. */
public enum ResourceStatus {
    /** The driver returned exactly the configured amount of devices. */
    OK,
    /**
     * Flink would skip this resource by design: its amount is missing or not positive, so a
     * TaskManager creates the driver but never asks it for devices, and tasks get none.
     */
    SKIPPED,
    /**
     * Something is broken: no factory key, factory not in any plugin, a non-numeric amount, the
     * factory or driver failed, timed out, or returned a different number of devices.
     */
    ERROR;

    /** The lower-case name used in JSON and the table. */
    @JsonValue
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
