package io.flinkdevices.sdk.health.internal;

import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.HealthAction;
import io.flinkdevices.sdk.health.HealthState;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The latest sample of every device, swapped whole on each sample (one volatile write), so that a
 * reader sees one consistent sample and never waits. Written by the monitor thread only.
 */
public final class MonitorState {

    /**
     * Failed samples in a row, and intervals without a sample, before every device reads {@code
     * degraded}; published as {@code ERRORS_BEFORE_DEGRADED}. It lives here so that
     * the monitor's internals need nothing of the public monitor class.
     */
    public static final int ERRORS_BEFORE_DEGRADED = 3;

    /** One device as the latest sample saw it. */
    static final class Device {
        final HealthState health;
        final String reason;
        final Instant since;
        final Map<String, Double> metrics;

        Device(HealthState health, String reason, Instant since, Map<String, Double> metrics) {
            this.health = health;
            this.reason = reason;
            this.since = since;
            this.metrics = metrics;
        }
    }

    /** Everything a reader needs, immutable. */
    static final class Snapshot {
        final Map<String, Device> devices;
        /** When the last sample completed, successful or not; null before the first. */
        final long sampledAtNanos;
        final boolean sampled;
        final long errors;
        /** Samples taken so far, good and failed. */
        final long samples;
        final int errorsInARow;
        final String lastError;
        final Instant degradedSince;

        Snapshot(Map<String, Device> devices, boolean sampled, long sampledAtNanos, long errors, long samples,
                int errorsInARow, String lastError, Instant degradedSince) {
            this.devices = devices;
            this.sampled = sampled;
            this.sampledAtNanos = sampledAtNanos;
            this.errors = errors;
            this.samples = samples;
            this.errorsInARow = errorsInARow;
            this.lastError = lastError;
            this.degradedSince = degradedSince;
        }
    }

    private final List<String> ids;
    private final Duration interval;
    private final HealthAction action;
    private final Clock clock;
    /** Devices out of service on the host (quarantined), as a quarantine listener said. */
    private final Set<String> outOfService = ConcurrentHashMap.newKeySet();
    private volatile Snapshot snapshot;
    private volatile boolean started;

    public MonitorState(List<String> ids, Duration interval, HealthAction action, Clock clock) {
        this.ids = ids;
        this.interval = interval;
        this.action = action;
        this.clock = clock;
        this.snapshot = new Snapshot(Collections.emptyMap(), false, System.nanoTime(), 0, 0, 0, null, null);
    }

    /** The monitor's thread starts: from now on a missing sample is a stale one. */
    public void markStarted() {
        snapshot = new Snapshot(Collections.emptyMap(), false, System.nanoTime(), 0, 0, 0, null, null);
        started = true;
    }

    boolean started() {
        return started;
    }

    Snapshot snapshot() {
        return snapshot;
    }

    Duration interval() {
        return interval;
    }

    HealthAction action() {
        return action;
    }

    Instant now() {
        return clock.instant();
    }

    public long errors() {
        return snapshot.errors;
    }

    /** Records a good sample; returns the health changes, one line each, for the log. */
    public List<String> record(Map<String, DeviceSample> samples) {
        Snapshot old = snapshot;
        Instant now = clock.instant();
        Map<String, Device> next = new HashMap<>();
        List<String> changes = new ArrayList<>();
        for (String id : ids) {
            DeviceSample s = samples.get(id);
            HealthState health = s == null ? HealthState.FAILED : s.health();
            String reason = s == null ? id + " not seen by the monitor's sample" : s.reason();
            Map<String, Double> metrics = s == null ? Collections.emptyMap() : s.metrics();
            Device before = old.devices.get(id);
            Instant since = before != null && before.health == health ? before.since : now;
            if (before != null ? before.health != health : health != HealthState.OK) {
                changes.add(id + " is " + health.value() + (reason.isEmpty() ? "" : ": " + reason)
                        + (before == null ? "" : " (was " + before.health.value() + ")"));
            }
            next.put(id, new Device(health, reason, since, metrics));
        }
        snapshot = new Snapshot(Collections.unmodifiableMap(next), true, System.nanoTime(), old.errors, old.samples + 1, 0,
                null, null);
        return changes;
    }

    /** The devices the latest sample saw failed, as {@code <id>: <reason>}, in the monitor's order. */
    public List<String> failedDevices() {
        Snapshot s = snapshot;
        List<String> out = new ArrayList<>();
        for (String id : ids) {
            Device d = s.devices.get(id);
            if (d != null && d.health == HealthState.FAILED) {
                out.add(id + ": " + d.reason);
            }
        }
        return out;
    }

    /** Records a failed sample; returns the errors so far. */
    public long recordError(String error) {
        Snapshot old = snapshot;
        int inARow = old.errorsInARow + 1;
        Instant degradedSince = old.degradedSince;
        if (inARow >= ERRORS_BEFORE_DEGRADED && degradedSince == null) {
            degradedSince = clock.instant();
        }
        snapshot = new Snapshot(old.devices, old.sampled, System.nanoTime(), old.errors + 1, old.samples + 1, inARow, error,
                degradedSince);
        return old.errors + 1;
    }

    /** Marks a device out of service on the host, or back in service. */
    public void outOfService(String id, boolean out) {
        if (out) {
            outOfService.add(id);
        } else {
            outOfService.remove(id);
        }
    }

    /** Whether a device is out of service on the host. */
    public boolean isOutOfService(String id) {
        return outOfService.contains(id);
    }
}
