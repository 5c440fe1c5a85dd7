package io.flinkdevices.sdk.health;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Locale;

/** What a failed device does to the tasks that hold it: the {@code health.action} parameter. */
@PublicEvolving
public enum HealthAction {
    /** Health and metrics only; tasks keep running. */
    REPORT,
    /** The job-side guard throws once a device of the task is {@code failed}, so Flink restarts the task. */
    FAIL_TASKS;

    /** {@code report} or {@code fail-tasks}: the parameter's and the {@code health.action} key's value. */
    public String value() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /**
     * Reads a {@code health.action} value; {@link #FAIL_TASKS} when it is absent or unknown (the
     * driver validated the parameter, so an unknown value comes from another version).
     */
    public static HealthAction parseOrDefault(String value) {
        for (HealthAction a : values()) {
            if (a.value().equalsIgnoreCase(value == null ? "" : value.strip())) {
                return a;
            }
        }
        return FAIL_TASKS;
    }
}
