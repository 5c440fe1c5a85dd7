package io.flinkdevices.sdk.info;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * The keys of an info whose values change while jobs run: the device's health and its metrics,
 * as the driver's monitor last sampled them (see {@code io.flinkdevices.sdk.health.DeviceMonitor}).
 *
 * <p>Flink hands every task its infos once, at TaskManager start; a live value behind a key is
 * the only way a later state reaches a task. A task reads it with {@code
 * info.getProperty(KEY_HEALTH)} on the object Flink gave it, which works across the plugin class
 * loader because {@link ExternalResourceInfo} is loaded parent-first. Reading never spawns a
 * process, touches a file or waits: it returns the latest sample.
 *
 * <p>A driver attaches live properties through its info's builder ({@code
 * GpuInfo.builder(...).live(monitor.properties(id))}). They take no part in {@code equals} or
 * {@code hashCode} (infos stay equal on identity) and are not serialized (a copy reads as a
 * device without monitoring). When monitoring is off the keys are absent, never stale.
 *
 * <p>How the values are written (what a task parses):
 *
 * <ul>
 *   <li>{@code health}: {@code ok}, {@code degraded} or {@code failed}, lower case.
 *   <li>{@code health.since}: an ISO-8601 instant in UTC, whole seconds ({@code 2026-11-26T12:03:07Z}),
 *       as {@code Instant.parse} reads it.
 *   <li>{@code health.quarantined}: {@code true} or absent.
 *   <li>{@code metric.<name>}: a number in the unit the metric's name or the driver's docs say
 *       (no unit in the value). A whole number is written without a fraction or exponent ({@code
 *       1234}, {@code -3}); any other as Java's {@code Double.toString} writes it ({@code 0.25},
 *       {@code 1.5E-4}). {@code Double.parseDouble} reads every one; {@code Long.parseLong} reads
 *       counters such as {@code metric.monitor.samples}. A metric the last sample did not give is
 *       absent, never {@code 0}.
 * </ul>
 *
 * <p>These keys are live only: an info builder's {@code extra(...)} and a {@link DeviceAttribute}
 * refuse a key of this namespace, since a fixed value there would be listed by {@code getKeys()}
 * yet hidden by the live one. A driver reports health and metrics through a {@code DeviceMonitor}
 * (a {@code DeviceSample} per device) and attaches them with the builder's {@code .live(...)}.
 *
 * <p>Implementations must be thread-safe and must not block.
 */
@PublicEvolving
public interface LiveProperties {

    /** {@code ok}, {@code degraded} or {@code failed}. */
    String KEY_HEALTH = "health";
    /** One line: what the monitor saw; absent while the device is {@code ok}. */
    String KEY_HEALTH_REASON = "health.reason";
    /** When the device entered its current health, ISO-8601 in UTC ({@code 2026-11-26T12:03:07Z}). */
    String KEY_HEALTH_SINCE = "health.since";
    /** The device as the monitor names it in messages ({@code mlx5_0/1}, {@code gpu 0}). */
    String KEY_HEALTH_DEVICE = "health.device";
    /** What a failed device does to the tasks that hold it: {@code report}, {@code fail-tasks} or {@code stop-taskmanager}. */
    String KEY_HEALTH_ACTION = "health.action";
    /**
     * {@code true} while the device is out of service on the host: quarantined after it failed,
     * until it has been healthy for {@code health.recover-after} or an operator clears it (its
     * {@code health} may read {@code ok} meanwhile); absent otherwise. A lease never takes such a
     * device.
     */
    String KEY_HEALTH_QUARANTINED = "health.quarantined";
    /** Prefix of every numeric key: {@code metric.<name>}; see the class comment for how a value is written. */
    String METRIC_PREFIX = "metric.";

    /** Live properties with no keys: what an info without monitoring has. */
    LiveProperties NONE =
            new LiveProperties() {
                @Override
                public Optional<String> get(String key) {
                    return Optional.empty();
                }

                @Override
                public Collection<String> keys() {
                    return Collections.emptyList();
                }
            };

    /** The latest value of {@code key}; empty when the key is not live or has no value now. */
    Optional<String> get(String key);

    /** The live keys that have a value now, in a stable order. */
    Collection<String> keys();

    /**
     * Whether {@code key} belongs to the live namespace ({@code health}, {@code health.*}, {@code
     * metric.*}); an info never holds a fixed property of that name.
     */
    static boolean isLiveKey(String key) {
        return key != null
                && (key.equals(KEY_HEALTH) || key.startsWith(KEY_HEALTH + ".") || key.startsWith(METRIC_PREFIX));
    }

    /**
     * The live keys of another info, read through its {@code getProperty}: what {@code
     * GpuInfo.from(info)} attaches to the typed copy of an info that a plugin class loader
     * created, so that the copy reads the same live values.
     */
    static LiveProperties of(ExternalResourceInfo info) {
        if (info == null) {
            return NONE;
        }
        return new LiveProperties() {
            @Override
            public Optional<String> get(String key) {
                if (!isLiveKey(key)) {
                    return Optional.empty();
                }
                Optional<String> v = info.getProperty(key);
                return v == null ? Optional.empty() : v;
            }

            @Override
            public Collection<String> keys() {
                Collection<String> all = info.getKeys();
                List<String> out = new ArrayList<>();
                if (all != null) {
                    for (String k : all) {
                        if (isLiveKey(k)) {
                            out.add(k);
                        }
                    }
                }
                return out;
            }
        };
    }
}
