package io.flinkdevices.sdk.coordination;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.health.DeviceMonitor;
import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.HealthListener;
import io.flinkdevices.sdk.health.HealthState;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Takes a monitored device out of service the first time it is seen {@code failed}, and returns it
 * once it has been seen {@code ok} without a break for the recover-after time. Touches the file only
 * on those two changes, never per sample. Runs on the monitor's thread only.
 */
final class QuarantineOnFailure implements HealthListener {

    private static final Logger LOG = LoggerFactory.getLogger(QuarantineOnFailure.class);

    private final DeviceQuarantine quarantine;
    private final Duration recoverAfter;
    /** Devices this listener took out of service (or found out of service) and watches for recovery. */
    private final Set<String> out = new HashSet<>();
    /** Since when each of those has been seen ok without a break. */
    private final Map<String, Instant> okSince = new HashMap<>();
    /**
     * Per device, the last write that failed ("out: reason" or "back: reason"): a failure is
     * logged once and again only when it changes (another reason, the other direction, a success
     * in between), not at every sample while a disk stays full.
     */
    private final Map<String, String> lastFailure = new HashMap<>();

    /** The monitor this listener was added to: told which devices are out of service. */
    private volatile DeviceMonitor monitor;

    QuarantineOnFailure(DeviceQuarantine quarantine, Duration recoverAfter) {
        this.quarantine = quarantine;
        this.recoverAfter = recoverAfter;
    }

    @Override
    public void attached(DeviceMonitor monitor) {
        this.monitor = monitor;
    }

    private void tell(String id, boolean out) {
        DeviceMonitor m = monitor;
        if (m != null) {
            m.outOfService(id, out);
        }
    }

    @Override
    public void sampled(Map<String, DeviceSample> samples, Instant at) {
        samples.forEach((id, s) -> {
            if (s.health() == HealthState.FAILED) {
                okSince.remove(id);
                if (!out.contains(id)) {
                    try {
                        quarantine.add(id, s.reason());
                        out.add(id);
                        tell(id, true);
                        succeeded(id, "taken out of service");
                    } catch (DeviceDriverException | RuntimeException e) {
                        failed(id, "out", e, "Cannot take failed device {} out of service in {} (tried again at every"
                                + " sample, logged again only when this changes): {}");
                    }
                }
            } else if (s.health() == HealthState.OK && out.contains(id)) {
                Instant since = okSince.computeIfAbsent(id, k -> at);
                if (Duration.between(since, at).compareTo(recoverAfter) >= 0) {
                    try {
                        if (quarantine.clear(id)) {
                            LOG.info("Device {} is back in service on this host: healthy since {} (health.recover-after {} s)",
                                    id, since, recoverAfter.toSeconds());
                        }
                        out.remove(id);
                        okSince.remove(id);
                        tell(id, false);
                        succeeded(id, "returned to service");
                    } catch (DeviceDriverException | RuntimeException e) {
                        failed(id, "back", e, "Cannot return device {} to service in {} (tried again at every sample,"
                                + " logged again only when this changes): {}");
                    }
                }
            } else if (s.health() != HealthState.OK) {
                okSince.remove(id);
            }
        });
    }

    private void failed(String id, String direction, Exception e, String warning) {
        String now = direction + ": " + e.getMessage();
        if (!now.equals(lastFailure.put(id, now))) {
            LOG.warn(warning, id, quarantine.file(), e.getMessage());
        }
    }

    private void succeeded(String id, String what) {
        if (lastFailure.remove(id) != null) {
            LOG.info("Device {} {} in {} after failed tries (logged above)", id, what, quarantine.file());
        }
    }
}
