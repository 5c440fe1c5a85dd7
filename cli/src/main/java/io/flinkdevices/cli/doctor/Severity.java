package io.flinkdevices.cli.doctor;

import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;

/** How bad a finding is. Either kind makes {@code doctor} exit 1. */
public enum Severity {
    /** Flink fails, or drops the resource, or tasks or pods do not get the devices. */
    ERROR,
    /** Flink runs, but not as the configuration suggests, or not the same on every host. */
    WARNING;

    /** The lower-case name used in JSON and the list. */
    @JsonValue
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
