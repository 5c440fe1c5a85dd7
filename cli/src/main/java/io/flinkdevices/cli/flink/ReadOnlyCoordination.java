package io.flinkdevices.cli.flink;

import io.flinkdevices.sdk.coordination.DeviceQuarantine;
import io.flinkdevices.sdk.coordination.QuarantinedDevice;
import io.flinkdevices.sdk.coordination.internal.CoordinationFileCheck;
import io.flinkdevices.sdk.coordination.internal.HeldDevices;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Lets {@code discover} and {@code doctor} ask a coordinated driver for devices without taking any
 * from, or writing to, the live coordination file that the host's TaskManagers share: the driver is
 * created with {@code coordination.enabled: false}, and the file is only read, to say which of the
 * devices returned are in use by a live TaskManager.
 *
 * <p>Without this, on a healthy host whose devices are all held by running TaskManagers, the CLI
 * reported that the driver "finds no usable device", and a run could reclaim or hold records.
 */
public final class ReadOnlyCoordination {

    /** The SDK's parameter that switches coordination on. */
    static final String ENABLED = "coordination.enabled";

    static final String FILE = "coordination.file";

    private ReadOnlyCoordination() {}

    /** Whether the params under {@code paramPrefix} switch the SDK's coordination on. */
    public static boolean enabled(Configuration config, String paramPrefix) {
        return "true".equalsIgnoreCase(config.getString(paramPrefix + ENABLED, "false").strip());
    }

    /**
     * The params Flink would hand the factory, with coordination switched off when it is on: the
     * key stays known to the factory, only its value changes.
     */
    public static Configuration params(Configuration config, String paramPrefix) {
        if (!enabled(config, paramPrefix)) {
            return new DelegatingConfiguration(config, paramPrefix);
        }
        Configuration copy = new Configuration(config);
        copy.setString(paramPrefix + ENABLED, "false");
        return new DelegatingConfiguration(copy, paramPrefix);
    }

    /**
     * The device ids held in the coordination file(s) by processes that run, with their pids:
     * the configured {@code coordination.file}, else the SDK's default files {@code
     * <java.io.tmpdir>/flink-devices-*.coordination}. Read without the lock and never written, by
     * the SDK's own reader (the file's size limit, record format and owner checks).
     */
    public static Map<String, Long> liveHolders(Configuration config, String paramPrefix) {
        Map<String, Long> holders = new LinkedHashMap<>();
        if (!enabled(config, paramPrefix)) {
            return holders;
        }
        for (Path f : files(config, paramPrefix)) {
            holders.putAll(HeldDevices.heldByOthers(f));
        }
        return holders;
    }

    /**
     * The coordination file(s) of a resource: the configured {@code coordination.file}, else the
     * SDK's default files {@code <java.io.tmpdir>/flink-devices-*.coordination} that exist.
     */
    public static List<Path> files(Configuration config, String paramPrefix) {
        List<Path> files = new ArrayList<>();
        String file = config.getString(paramPrefix + FILE, "").strip();
        if (!file.isEmpty()) {
            files.add(Path.of(file));
        } else {
            try (Stream<Path> all = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
                all.filter(p -> p.getFileName().toString().matches("flink-devices-.*\\.coordination"))
                        .sorted()
                        .forEach(files::add);
            } catch (IOException | RuntimeException e) {
                return files;
            }
        }
        return files;
    }

    /**
     * Why the resource's coordination file(s) cannot be used, one line each starting with the full
     * key ({@code external-resource.gpu.param.coordination.file: /x is a symbolic link; coordination
     * never follows one}): the check every TaskManager's factory makes (a symbolic link, a folder, a
     * FIFO, device or socket, also as the {@code .lock} file), so that {@code quarantine list} and
     * {@code clear} refuse what {@code discover}, {@code doctor} and the TaskManagers refuse, in the
     * same words. Empty where coordination is off or every file is regular or absent.
     */
    public static List<String> unusable(Configuration config, String paramPrefix) {
        List<String> problems = new ArrayList<>();
        if (enabled(config, paramPrefix)) {
            for (Path f : files(config, paramPrefix)) {
                for (String p : CoordinationFileCheck.problems(f)) {
                    problems.add(paramPrefix + FILE + ": " + p);
                }
            }
        }
        return problems;
    }

    /**
     * The devices out of service (quarantined after their health failed) in the resource's
     * coordination file(s), read without the lock and never written; empty where coordination is off.
     */
    public static List<QuarantinedDevice> quarantined(Configuration config, String paramPrefix) {
        List<QuarantinedDevice> out = new ArrayList<>();
        if (enabled(config, paramPrefix)) {
            for (Path f : files(config, paramPrefix)) {
                out.addAll(DeviceQuarantine.peek(f));
            }
        }
        return out;
    }

    /**
     * One line per quarantined device of a resource: {@code device mlx5_0/1 is out of service
     * (quarantined): port mlx5_0/1 state DOWN; since 2026-11-26T06:00:00Z, seen by
     * TaskManagerRunner pid 4242 (rdma); once repaired: flink-devices quarantine clear --resource
     * rdma --device mlx5_0/1}.
     */
    public static List<String> quarantineNotes(Configuration config, String resourceName, String paramPrefix) {
        List<String> notes = new ArrayList<>();
        for (QuarantinedDevice q : quarantined(config, paramPrefix)) {
            notes.add(describe(q) + "; once repaired: " + DeviceQuarantine.clearCommand(resourceName, q.deviceId()));
        }
        return notes;
    }

    /** {@code device X is out of service (quarantined): REASON; since T, seen by W}. */
    public static String describe(QuarantinedDevice q) {
        return "device " + q.deviceId() + " is out of service (quarantined): " + q.reason() + "; since "
                + q.since().truncatedTo(java.time.temporal.ChronoUnit.SECONDS) + ", seen by " + q.seenBy();
    }

    /**
     * One note per device that a live process holds: {@code device 0 (GPU-...) is in use by pid
     * 4242}. A device matches a record by its UUID (also as the part of a device, as a MIG unit is
     * recorded), its index when it has no UUID, or the OpenCL id {@code
     * <platform>/<device-index>/<device-name>}.
     */
    public static List<String> inUse(List<Map<String, String>> infos, Map<String, Long> holders) {
        List<String> notes = new ArrayList<>();
        if (holders.isEmpty()) {
            return notes;
        }
        for (Map<String, String> info : infos) {
            List<String> ids = new ArrayList<>();
            if (info.get("uuid") != null) {
                ids.add(info.get("uuid"));
            } else if (info.get("index") != null) {
                ids.add(info.get("index"));
            }
            if (info.get("platform") != null && info.get("device-index") != null) {
                ids.add(info.get("platform") + "/" + info.get("device-index") + "/" + info.get("device-name"));
            }
            for (String id : ids) {
                Long pid = heldAs(id, holders);
                if (pid != null) {
                    notes.add("device " + info.getOrDefault("index", info.getOrDefault("device-index", "?"))
                            + " (" + id + ") is in use by pid " + pid);
                    break;
                }
            }
        }
        return notes;
    }

    /**
     * The holder of {@code id}, recorded as itself or as a part of a device ({@code
     * <GPU-uuid>/<MIG-uuid>}: a MIG unit's record names its GPU first).
     */
    private static Long heldAs(String id, Map<String, Long> holders) {
        Long pid = holders.get(id);
        if (pid != null) {
            return pid;
        }
        for (Map.Entry<String, Long> e : holders.entrySet()) {
            if (e.getKey().endsWith("/" + id)) {
                return e.getValue();
            }
        }
        return null;
    }

    /**
     * One note per resource whose devices running TaskManagers of this host hold: {@code
     * external-resource.gpu: held by running TaskManagers of this host (coordination): GPU-a by
     * pid 4242, ...}. Empty where coordination is off or nothing is held.
     */
    public static List<String> heldNotes(Configuration config) {
        List<String> notes = new ArrayList<>();
        for (ResourceSetting r : ResourceSetting.readAll(config)) {
            Map<String, Long> holders = liveHolders(config, r.paramPrefix());
            if (holders.isEmpty()) {
                continue;
            }
            List<String> held = new ArrayList<>();
            holders.forEach((id, pid) -> held.add(id + " by pid " + pid));
            notes.add("external-resource." + r.name() + ": held by running TaskManagers of this host (coordination): "
                    + String.join(", ", held) + "; they are theirs until those processes end, not missing");
        }
        return notes;
    }
}
