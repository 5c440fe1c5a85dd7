package io.flinkdevices.sdk.coordination;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.internal.CoordinationFile;
import io.flinkdevices.sdk.coordination.internal.HeldDevices;
import io.flinkdevices.sdk.coordination.internal.QuarantineRecord;
import io.flinkdevices.sdk.health.HealthListener;
import io.flinkdevices.sdk.health.MonitorSettings;
import io.flinkdevices.sdk.internal.Capped;

import org.apache.flink.annotation.PublicEvolving;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * The devices out of service in one coordination file: a device whose health turned {@code failed}
 * is recorded there (with the reason, the time and the process that saw it), and no allocation of
 * any process sharing the file hands it out, nor a part of it, nor the device a quarantined part
 * belongs to, until it is cleared: by the process that watches it, once it has been healthy for
 * {@code health.recover-after} ({@link #listener(MonitorSettings)}), or by an operator ({@code
 * flink-devices quarantine clear}).
 *
 * <pre>{@code
 * DeviceMonitor monitor = DeviceMonitor.create(settings, ids, sampler);
 * if (coordinator != null) {
 *     monitor.addListener(coordinator.quarantine().listener(settings));
 * }
 * monitor.start();
 * }</pre>
 *
 * <p>Every change is one locked transaction on the file, like an allocation: never an edit by
 * hand. Quarantine lines start with {@code #}, so that an earlier release reads them as comments
 * and keeps them (it does not honour them).
 */
@PublicEvolving
public final class DeviceQuarantine {

    private static final Logger LOG = LoggerFactory.getLogger(DeviceQuarantine.class);

    private final CoordinationFile file;
    private final String resourceName;

    DeviceQuarantine(CoordinationFile file, CoordinationParams params) {
        this.file = file;
        String prefix = params.fullKey("");
        String name = prefix.startsWith("external-resource.") && prefix.endsWith(".param.")
                ? prefix.substring("external-resource.".length(), prefix.length() - ".param.".length())
                : "";
        this.resourceName = name.isEmpty() ? null : name;
    }

    /** The quarantine of the file in {@code params} (same as {@code DeviceCoordinator.create(params).quarantine()}). */
    public static DeviceQuarantine create(CoordinationParams params) {
        return DeviceCoordinator.create(params).quarantine();
    }

    /** The coordination file. */
    public Path file() {
        return file.file();
    }

    /** The resource name from the keys the params were read from ({@code gpu}); null when built in code. */
    String resourceName() {
        return resourceName;
    }

    /**
     * The operator's command that returns {@code deviceId} to service: {@code flink-devices
     * quarantine clear --resource <name> --device <id>}.
     */
    public static String clearCommand(String resourceName, String deviceId) {
        return "flink-devices quarantine clear --resource " + (resourceName == null ? "<resource>" : resourceName)
                + " --device " + deviceId;
    }

    /**
     * Takes {@code deviceId} out of service, seen by this process. Does nothing when it is out of
     * service already (the first reason and time stay). A reason longer than 200 characters is
     * kept as its first 200 and {@code … (N more characters)}.
     *
     * @return whether it was added
     * @throws DeviceDriverException when the lock is not obtained within the lock timeout or the
     *     file cannot be read or written
     */
    public boolean add(String deviceId, String reason) throws DeviceDriverException {
        Objects.requireNonNull(reason, "reason");
        if (deviceId == null || deviceId.isEmpty()) {
            throw new IllegalArgumentException("empty device id");
        }
        // capped: the reason goes into the file (of at most 1 MiB) and into every message about the device
        QuarantineRecord q = new QuarantineRecord(deviceId, System.currentTimeMillis(), seenByThisProcess(),
                Capped.text(reason.replaceAll("[\\r\\n]+", " ")));
        boolean added = file.transact(locked -> {
            List<QuarantineRecord> all = new ArrayList<>(locked.content().quarantines());
            if (all.stream().anyMatch(r -> r.deviceId().equals(deviceId))) {
                return false;
            }
            all.add(q);
            locked.write(locked.content().records(), all);
            return true;
        });
        if (added) {
            LOG.warn("Device {} is out of service on this host (quarantined in coordination file {}): {}. No TaskManager"
                    + " of the host is handed it until it has been healthy for health.recover-after or an operator"
                    + " runs: {}", deviceId, file.file(), q.reason(), clearCommand(resourceName, deviceId));
        }
        return added;
    }

    /**
     * Returns {@code deviceId} to service.
     *
     * @return whether it was out of service
     * @throws DeviceDriverException when the lock is not obtained in time or the file cannot be
     *     read or written
     */
    public boolean clear(String deviceId) throws DeviceDriverException {
        return !clearWhere(deviceId::equals).isEmpty();
    }

    /**
     * Returns every device of the file to service.
     *
     * @return the ids that were out of service
     * @throws DeviceDriverException when the lock is not obtained in time or the file cannot be
     *     read or written
     */
    public List<String> clearAll() throws DeviceDriverException {
        return clearWhere(id -> true);
    }

    private List<String> clearWhere(Predicate<String> which) throws DeviceDriverException {
        return file.transact(locked -> {
            List<QuarantineRecord> kept = new ArrayList<>();
            List<String> cleared = new ArrayList<>();
            for (QuarantineRecord q : locked.content().quarantines()) {
                if (which.test(q.deviceId())) {
                    cleared.add(q.deviceId());
                } else {
                    kept.add(q);
                }
            }
            if (!cleared.isEmpty()) {
                locked.write(locked.content().records(), kept);
            }
            return cleared;
        });
    }

    /**
     * The devices out of service, in the order they were taken out, read under the lock.
     *
     * @throws DeviceDriverException when the lock is not obtained in time or the file cannot be read
     */
    public List<QuarantinedDevice> list() throws DeviceDriverException {
        return file.transact(locked -> convert(locked.content().quarantines()));
    }

    /**
     * The devices out of service in {@code file}, read without the lock and never written (for
     * tools that only report); empty when the file is absent, not a regular file or unreadable.
     */
    public static List<QuarantinedDevice> peek(Path file) {
        return convert(HeldDevices.quarantined(file));
    }

    /**
     * A listener for the driver's {@link io.flinkdevices.sdk.health.DeviceMonitor}, whose device
     * ids are coordination ids: it takes a device out of service the first time a sample sees it
     * {@code failed}, and returns it once it has been seen healthy for {@link
     * MonitorSettings#recoverAfter()}. A failed transaction is logged and tried again at the next
     * sample.
     */
    public HealthListener listener(MonitorSettings settings) {
        return new QuarantineOnFailure(this, settings.recoverAfter());
    }

    private static List<QuarantinedDevice> convert(List<QuarantineRecord> records) {
        List<QuarantinedDevice> out = new ArrayList<>();
        for (QuarantineRecord q : records) {
            // capped again: a reason written by hand or by an earlier release may be of any length
            out.add(new QuarantinedDevice(q.deviceId(), Capped.text(q.reason()), Instant.ofEpochMilli(q.sinceMillis()),
                    Capped.text(q.who())));
        }
        return out;
    }

    /** {@code TaskManagerRunner pid 4242 (rdma)}: the main class, the PID and the resource. */
    private String seenByThisProcess() {
        String command = System.getProperty("sun.java.command", "").strip();
        String main = command.isEmpty() ? "java" : command.split("\\s+")[0];
        // a main class (org.apache.flink.runtime.taskexecutor.TaskManagerRunner) or a jar's file name
        main = main.endsWith(".jar") ? main.substring(main.lastIndexOf('/') + 1) : main.substring(main.lastIndexOf('.') + 1);
        return main + " pid " + ProcessHandle.current().pid() + (resourceName == null ? "" : " (" + resourceName + ")");
    }

    @Override
    public String toString() {
        return "DeviceQuarantine{" + file.file() + "}";
    }
}
