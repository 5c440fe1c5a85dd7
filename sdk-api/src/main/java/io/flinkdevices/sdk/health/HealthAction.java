package io.flinkdevices.sdk.health;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Locale;

/** What a failed device does to the tasks that hold it: the {@code health.action} parameter. */
@PublicEvolving
public enum HealthAction {
    /** Health and metrics only; tasks keep running. */
    REPORT,
    /** The job-side guard throws once a device of the task is {@code failed}, so Flink restarts the task. */
    FAIL_TASKS,
    /**
     * The TaskManager process exits (code {@value DeviceMonitor#STOP_EXIT_CODE}) with one log line
     * naming the device and the reason once one of its devices is {@code failed}, so that
     * Kubernetes, Yarn or a standalone supervisor starts a replacement (whose driver does not offer
     * a port that is down or a GPU that vanished). Never in a JVM that hosts anything else: a
     * local cluster in a test would exit with it.
     */
    STOP_TASKMANAGER;

    /** {@code report}, {@code fail-tasks} or {@code stop-taskmanager}: the parameter's and the {@code health.action} key's value. */
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
