package io.flinkdevices.cli.discover;

import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;

/** The outcome for one resource listed in {@code external-resources}. */
public enum ResourceStatus {
    /**
     * The driver returned exactly the configured amount of devices, and a TaskManager starting now
     * would be handed that many: enough of the host's devices are free.
     */
    OK,
    /**
     * The driver works, but a TaskManager starting now would not get the amount: too few of the
     * host's devices are free (the others are held by running TaskManagers, quarantined, or read
     * {@code failed}).
     */
    UNAVAILABLE,
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
