package io.flinkdevices.sdk.health.internal;

import io.flinkdevices.sdk.health.MonitorSettings;
import io.flinkdevices.sdk.health.HealthState;
import io.flinkdevices.sdk.info.LiveProperties;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** One device's live keys, read from the monitor's latest snapshot without waiting. */
public final class MonitorView implements LiveProperties {

    static final String METRIC_ERRORS = METRIC_PREFIX + MonitorSettings.ERRORS_METRIC;
    static final String METRIC_SAMPLES = METRIC_PREFIX + MonitorSettings.SAMPLES_METRIC;

    private final MonitorState state;
    private final String id;
    // keeps the monitor running while this view is reachable
    @SuppressWarnings("unused")
    private final Object lease;

    public MonitorView(MonitorState state, String id, Object lease) {
        this.state = state;
        this.id = id;
        this.lease = lease;
    }

    /** Health, reason and since, with staleness and persistent errors applied. */
    private String[] health(MonitorState.Snapshot s, MonitorState.Device d) {
        long intervalNanos = state.interval().toNanos();
        long age = System.nanoTime() - s.sampledAtNanos;
        // the sample under way gets one interval on top
        if (age > (MonitorState.ERRORS_BEFORE_DEGRADED + 1) * intervalNanos) {
            // in ms under 10 s: an interval of 100 ms goes stale after 400 ms, not "0 s"
            String forHow = age < 10_000_000_000L ? age / 1_000_000L + " ms" : age / 1_000_000_000L + " s";
            Instant since = state.now().minusNanos(age).truncatedTo(ChronoUnit.SECONDS);
            return worse(d, new String[] {HealthState.DEGRADED.value(),
                    "no sample for " + forHow + " (the sampler has not returned; interval " + state.interval().toMillis() + " ms)",
                    since.toString()});
        }
        if (s.errorsInARow >= MonitorState.ERRORS_BEFORE_DEGRADED) {
            return worse(d, new String[] {HealthState.DEGRADED.value(),
                    s.errorsInARow + " samples in a row failed, the last with " + s.lastError,
                    s.degradedSince.truncatedTo(ChronoUnit.SECONDS).toString()});
        }
        if (d == null) {
            return null;
        }
        return new String[] {d.health.value(), d.reason, d.since.truncatedTo(ChronoUnit.SECONDS).toString()};
    }

    /** The value of {@code health} alone, as {@link #health} decides it. */
    private String healthValue(MonitorState.Snapshot s, MonitorState.Device d) {
        long age = System.nanoTime() - s.sampledAtNanos;
        boolean degraded = age > (MonitorState.ERRORS_BEFORE_DEGRADED + 1) * state.interval().toNanos()
                || s.errorsInARow >= MonitorState.ERRORS_BEFORE_DEGRADED;
        if (degraded) {
            return d != null && d.health == HealthState.FAILED ? d.health.value() : HealthState.DEGRADED.value();
        }
        return d == null ? null : d.health.value();
    }

    /** A failed device stays failed while the monitor cannot look again. */
    private static String[] worse(MonitorState.Device d, String[] degraded) {
        if (d != null && d.health == HealthState.FAILED) {
            return new String[] {d.health.value(), d.reason, d.since.truncatedTo(ChronoUnit.SECONDS).toString()};
        }
        return degraded;
    }

    @Override
    public Optional<String> get(String key) {
        MonitorState.Snapshot s = state.snapshot();
        if (!state.started()) {
            return Optional.empty();
        }
        MonitorState.Device d = s.devices.get(id);
        switch (key) {
            case KEY_HEALTH: {
                // read per record by guards: no strings built, no time formatted
                String v = healthValue(s, d);
                return v == null ? Optional.empty() : Optional.of(v);
            }
            case KEY_HEALTH_REASON:
            case KEY_HEALTH_SINCE: {
                String[] h = health(s, d);
                if (h == null) {
                    return Optional.empty();
                }
                String v = key.equals(KEY_HEALTH) ? h[0] : key.equals(KEY_HEALTH_REASON) ? h[1] : h[2];
                return v == null || v.isEmpty() ? Optional.empty() : Optional.of(v);
            }
            case KEY_HEALTH_DEVICE:
                return Optional.of(id);
            case KEY_HEALTH_ACTION:
                return Optional.of(state.action().value());
            case KEY_HEALTH_QUARANTINED:
                return state.isOutOfService(id) ? Optional.of("true") : Optional.empty();
            case METRIC_ERRORS:
                return Optional.of(Long.toString(s.errors));
            case METRIC_SAMPLES:
                return Optional.of(Long.toString(s.samples));
            default:
                if (d != null && key.startsWith(METRIC_PREFIX)) {
                    Double v = d.metrics.get(key.substring(METRIC_PREFIX.length()));
                    return v == null ? Optional.empty() : Optional.of(format(v));
                }
                return Optional.empty();
        }
    }

    @Override
    public Collection<String> keys() {
        MonitorState.Snapshot s = state.snapshot();
        if (!state.started()) {
            return Collections.emptyList();
        }
        MonitorState.Device d = s.devices.get(id);
        List<String> out = new ArrayList<>();
        String[] h = health(s, d);
        if (h != null) {
            out.add(KEY_HEALTH);
            if (h[1] != null && !h[1].isEmpty()) {
                out.add(KEY_HEALTH_REASON);
            }
            out.add(KEY_HEALTH_SINCE);
        }
        out.add(KEY_HEALTH_DEVICE);
        out.add(KEY_HEALTH_ACTION);
        if (state.isOutOfService(id)) {
            out.add(KEY_HEALTH_QUARANTINED);
        }
        if (d != null) {
            for (Map.Entry<String, Double> e : d.metrics.entrySet()) {
                out.add(METRIC_PREFIX + e.getKey());
            }
        }
        out.add(METRIC_ERRORS);
        out.add(METRIC_SAMPLES);
        return out;
    }

    /** Whole numbers without a fraction ({@code 1234}), others as Java prints a double. */
    static String format(double v) {
        if (v == Math.rint(v) && Math.abs(v) < 9.007199254740992E15) {
            return Long.toString((long) v);
        }
        return Double.toString(v);
    }

    @Override
    public String toString() {
        return "live keys of " + id;
    }
}
