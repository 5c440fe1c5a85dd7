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
    /** Prefix of every numeric key: {@code metric.<name>}. */
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
