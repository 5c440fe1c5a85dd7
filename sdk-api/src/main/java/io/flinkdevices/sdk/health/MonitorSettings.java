package io.flinkdevices.sdk.health;

import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.internal.Visible;
import io.flinkdevices.sdk.reference.MetricDoc;
import io.flinkdevices.sdk.reference.ParamDoc;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.util.TimeUtils;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The run-time parameters every monitoring driver reads, validated through {@link DriverParams}
 * so that a bad value is one problem naming its full key:
 *
 * <pre>{@code
 * external-resource.rdma.param.monitor.interval: 10 s   # 0 turns monitoring off (keys absent)
 * external-resource.rdma.param.health.action: fail-tasks # report | fail-tasks | stop-taskmanager
 * external-resource.rdma.param.health.recover-after: 5 min # healthy this long: back in service
 * }</pre>
 *
 * <p>With coordination on, a device whose health turns {@code failed} is quarantined in the host's
 * coordination file (in every action mode) until the process watching it has seen it healthy for
 * {@link #RECOVER_AFTER}, or an operator clears it ({@code flink-devices quarantine clear}).
 */
@PublicEvolving
public final class MonitorSettings {

    /** Key of the sampling interval; {@code 0} turns monitoring off. */
    public static final String INTERVAL = "monitor.interval";
    /** Key of what a failed device does to its tasks. */
    public static final String ACTION = "health.action";
    /** Key of how long a quarantined device must stay healthy before it is back in service. */
    public static final String RECOVER_AFTER = "health.recover-after";
    /**
     * {@link #RECOVER_AFTER} when unset: 5 minutes, 30 samples at the default interval, long enough
     * that a link flapping every few minutes stays out of service and short enough that a port
     * that came back serves again without an operator.
     */
    public static final Duration DEFAULT_RECOVER_AFTER = Duration.ofMinutes(5);
    /** The metric every monitor publishes for each device: samples that failed ({@code metric.monitor.errors}). */
    public static final String ERRORS_METRIC = "monitor.errors";
    /** The metric every monitor publishes for each device: samples taken ({@code metric.monitor.samples}). */
    public static final String SAMPLES_METRIC = "monitor.samples";
    /** The interval when {@link #INTERVAL} is unset. */
    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(10);
    /** The shortest interval other than 0: shorter would spend a core on sysfs reads. */
    public static final Duration MIN_INTERVAL = Duration.ofMillis(100);

    private static final Pattern ZERO = Pattern.compile("0+(\\s*[a-zA-Zµ]+)?");

    private final Duration interval;
    private final HealthAction action;
    private final Duration recoverAfter;
    private final String name;
    private final String keyPrefix;

    private MonitorSettings(Duration interval, HealthAction action, Duration recoverAfter, String name, String keyPrefix) {
        this.interval = interval;
        this.action = action;
        this.recoverAfter = recoverAfter;
        this.name = name;
        this.keyPrefix = keyPrefix;
    }

    /**
     * The parameters {@link #read} reads, for a factory's {@link
     * io.flinkdevices.sdk.reference.DocumentedDriver#parameters()}.
     *
     * @param samples what one sample of this driver's monitor reads, e.g. {@code the sysfs port
     *     state and counters}
     */
    public static List<ParamDoc> docs(String samples) {
        return List.of(
                ParamDoc.of(
                        INTERVAL,
                        ParamDoc.duration(DEFAULT_INTERVAL),
                        "how often the monitor samples " + samples + "; `0` turns monitoring off (no thread; live keys absent); otherwise "
                                + ParamDoc.duration(MIN_INTERVAL) + " to 1 d"),
                ParamDoc.of(
                        ACTION,
                        "`fail-tasks`",
                        "what a `failed` device does: `report` (health and metrics only), `fail-tasks` (the tasks holding it fail through their guard), `stop-taskmanager` (exit code 75 and one ERROR line)"),
                ParamDoc.of(
                        RECOVER_AFTER,
                        ParamDoc.duration(DEFAULT_RECOVER_AFTER),
                        "with coordination on, how long a quarantined device must read `ok` without a break before it is back in service; `0`: at the first good sample; 0 to 1 d"));
    }

    /** The metrics every monitor publishes for each device, besides the driver's own. */
    public static List<MetricDoc> metricDocs() {
        return List.of(
                MetricDoc.of(ERRORS_METRIC, "samples of this device that failed (a tool or library error, a timeout, garbage); three in a row make it `degraded`", "samples"),
                MetricDoc.of(SAMPLES_METRIC, "samples of this device taken since the monitor started", "samples"));
    }

    /**
     * Reads {@link #INTERVAL}, {@link #ACTION} and {@link #RECOVER_AFTER}; problems go to {@code params}, reported by its
     * {@code validate()}.
     */
    public static MonitorSettings read(DriverParams params) {
        String raw = params.string(INTERVAL, null);
        Duration interval = DEFAULT_INTERVAL;
        if (raw != null) {
            interval = parseInterval(raw);
            if (interval == null) {
                params.problem(
                        INTERVAL,
                        "expected 0 (monitoring off) or a duration from 100 ms to 1 d such as '10 s' but got "
                                + Visible.quoted(raw));
                interval = DEFAULT_INTERVAL;
            }
        }
        HealthAction action = params.enumValue(ACTION, HealthAction.class, HealthAction.FAIL_TASKS);
        String rawRecover = params.string(RECOVER_AFTER, null);
        Duration recoverAfter = DEFAULT_RECOVER_AFTER;
        if (rawRecover != null) {
            recoverAfter = parseRecoverAfter(rawRecover);
            if (recoverAfter == null) {
                params.problem(
                        RECOVER_AFTER,
                        "expected 0 (back at the first healthy sample) or a duration up to 1 d such as '5 min' but got "
                                + Visible.quoted(rawRecover));
                recoverAfter = DEFAULT_RECOVER_AFTER;
            }
        }
        String prefix = params.keyPrefix();
        return new MonitorSettings(interval, action, recoverAfter,
                prefix.replaceFirst("^external-resource\\.", "").replaceFirst("\\.param\\.$", ""), prefix);
    }

    /** Settings built in code (tests, tools); {@code interval} 0 is off. */
    public static MonitorSettings of(Duration interval, HealthAction action, String name) {
        Objects.requireNonNull(interval, "interval");
        if (!interval.isZero() && (interval.compareTo(MIN_INTERVAL) < 0 || interval.compareTo(DriverParams.MAX_DURATION) > 0)) {
            throw new IllegalArgumentException("interval must be 0 or from 100 ms to 1 d but is " + interval);
        }
        return new MonitorSettings(interval, Objects.requireNonNull(action, "action"), DEFAULT_RECOVER_AFTER,
                Objects.requireNonNull(name, "name"), "external-resource." + name + ".param.");
    }

    /** The same settings with another {@link #RECOVER_AFTER} (tests, tools). */
    public MonitorSettings withRecoverAfter(Duration recoverAfter) {
        if (recoverAfter == null || recoverAfter.isNegative() || recoverAfter.compareTo(DriverParams.MAX_DURATION) > 0) {
            throw new IllegalArgumentException("recover-after must be from 0 to 1 d but is " + recoverAfter);
        }
        return new MonitorSettings(interval, action, recoverAfter, name, keyPrefix);
    }

    private static Duration parseRecoverAfter(String raw) {
        String v = raw.strip();
        try {
            if (ZERO.matcher(v).matches()) {
                TimeUtils.parseDuration(v);
                return Duration.ZERO;
            }
            Duration d = TimeUtils.parseDuration(v);
            return d.isNegative() || d.compareTo(DriverParams.MAX_DURATION) > 0 ? null : d;
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** How long a quarantined device must be seen healthy before it is back in service. */
    public Duration recoverAfter() {
        return recoverAfter;
    }

    private static Duration parseInterval(String raw) {
        String v = raw.strip();
        try {
            if (ZERO.matcher(v).matches()) {
                // a unit Flink knows, or none
                TimeUtils.parseDuration(v);
                return Duration.ZERO;
            }
            Duration d = TimeUtils.parseDuration(v);
            if (d.compareTo(MIN_INTERVAL) < 0 || d.compareTo(DriverParams.MAX_DURATION) > 0) {
                return null;
            }
            return d;
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** The sampling interval; zero when monitoring is off. */
    public Duration interval() {
        return interval;
    }

    /** Whether monitoring is on. */
    public boolean enabled() {
        return !interval.isZero();
    }

    /** What a failed device does to its tasks. */
    public HealthAction action() {
        return action;
    }

    /** The prefix of the full keys ({@code external-resource.rdma.param.}), for log lines. */
    public String keyPrefix() {
        return keyPrefix;
    }

    /** The resource name ({@code rdma}), for thread names and log lines. */
    public String name() {
        return name;
    }

    @Override
    public String toString() {
        return enabled() ? "every " + interval.toMillis() + " ms, " + action.value()
                + ", recover after " + recoverAfter.toMillis() + " ms" : "off";
    }
}
