package io.flinkdevices.cli.discover;

import io.flinkdevices.sdk.coordination.QuarantinedDevice;
import io.flinkdevices.sdk.health.HealthState;
import io.flinkdevices.sdk.info.LiveProperties;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Whether this host can hand a TaskManager starting now the configured amount of a resource: of the
 * devices the driver found, which are free, which running TaskManagers hold (coordination), which
 * are out of service (quarantined in the coordination file) and which read {@code failed} at the
 * driver's first health sample. A device is counted once, in the first of quarantined, held, failed
 * that applies (a quarantined device stays out after its holder ends).
 *
 * @param amount the configured amount
 * @param devices how many devices were looked at (at least the amount)
 * @param free how many of them a TaskManager starting now would be handed
 * @param held {@code <device> by pid <pid>}, one per device a live process holds
 * @param quarantined the devices out of service, with the reason
 * @param failed the devices whose first sample read {@code failed}, with the reason
 */
@JsonPropertyOrder({"servable", "amount", "devices", "free", "held", "quarantined", "failed"})
public record Availability(
        long amount, int devices, int free, List<String> held, List<String> quarantined, List<String> failed) {

    public Availability {
        held = List.copyOf(held);
        quarantined = List.copyOf(quarantined);
        failed = List.copyOf(failed);
    }

    /** Whether a TaskManager starting now would be handed {@link #amount} devices. */
    @JsonProperty("servable")
    public boolean servable() {
        return free >= amount;
    }

    /**
     * One line: {@code 2 devices: 2 free} or {@code cannot hand out 2 now: 0 of 2 devices free; held:
     * GPU-a by pid 4242; quarantined: GPU-b (...)}.
     */
    @JsonIgnore
    public String summary() {
        StringBuilder s = new StringBuilder();
        if (servable()) {
            s.append("can hand out ").append(amount).append(" now: ");
        } else {
            s.append("cannot hand out ").append(amount).append(" now: ");
        }
        s.append(free).append(" of ").append(devices).append(devices == 1 ? " device" : " devices").append(" free");
        append(s, "held", held);
        append(s, "quarantined", quarantined);
        append(s, "failed", failed);
        return s.toString();
    }

    private static void append(StringBuilder s, String what, List<String> devices) {
        if (!devices.isEmpty()) {
            s.append("; ").append(devices.size()).append(' ').append(what).append(": ").append(String.join(", ", devices));
        }
    }

    /**
     * Sorts each device into free, held, quarantined or failed.
     *
     * @param amount the configured amount
     * @param devices each device's properties, live keys included ({@code health.device} is the
     *     coordination id where the driver monitors)
     * @param holders coordination ids held by live processes, with their pids
     * @param quarantine the devices out of service in the coordination file(s)
     */
    static Availability of(
            long amount, List<Map<String, String>> devices, Map<String, Long> holders, List<QuarantinedDevice> quarantine) {
        int free = 0;
        List<String> held = new ArrayList<>();
        List<String> quarantined = new ArrayList<>();
        List<String> failed = new ArrayList<>();
        for (Map<String, String> device : devices) {
            List<String> ids = ids(device);
            String name = ids.isEmpty() ? "?" : ids.get(0);
            Map.Entry<String, Long> holder = holder(ids, holders);
            QuarantinedDevice out = quarantine(ids, quarantine);
            if (out != null) {
                quarantined.add(name + " (" + out.reason() + ")");
            } else if (holder != null) {
                held.add(name + " by pid " + holder.getValue());
            } else if (HealthState.FAILED.value().equals(device.get(LiveProperties.KEY_HEALTH))) {
                String reason = device.get(LiveProperties.KEY_HEALTH_REASON);
                failed.add(name + (reason == null ? "" : " (" + reason + ")"));
            } else {
                free++;
            }
        }
        return new Availability(amount, devices.size(), free, held, quarantined, failed);
    }

    /**
     * The ids a coordination record may name the device by: the monitor's {@code health.device},
     * which is the driver's coordination id; without monitoring, its UUID, its index where it has
     * no UUID, the OpenCL id {@code <platform>/<device-index>/<device-name>}.
     */
    static List<String> ids(Map<String, String> device) {
        List<String> ids = new ArrayList<>();
        add(ids, device.get(LiveProperties.KEY_HEALTH_DEVICE));
        if (!ids.isEmpty()) {
            return ids;
        }
        if (device.get("uuid") != null) {
            add(ids, device.get("uuid"));
        } else {
            add(ids, device.get("index"));
        }
        if (device.get("platform") != null && device.get("device-index") != null) {
            add(ids, device.get("platform") + "/" + device.get("device-index") + "/" + device.get("device-name"));
        }
        return ids;
    }

    private static void add(List<String> ids, String id) {
        if (id != null && !id.isEmpty() && !ids.contains(id)) {
            ids.add(id);
        }
    }

    /**
     * Whether record id {@code recorded} takes the device known as {@code id}: the same id, a part
     * of it or the device it is a part of ({@code <device>/<part>}: a held GPU excludes its MIG
     * units and a held unit its GPU), or the device recorded under its parent ({@code
     * <GPU-uuid>/<MIG-uuid>} for a MIG unit known by its own UUID).
     */
    static boolean takes(String recorded, String id) {
        return recorded.equals(id)
                || recorded.startsWith(id + "/")
                || id.startsWith(recorded + "/")
                || recorded.endsWith("/" + id);
    }

    private static Map.Entry<String, Long> holder(List<String> ids, Map<String, Long> holders) {
        for (String id : ids) {
            for (Map.Entry<String, Long> h : holders.entrySet()) {
                if (takes(h.getKey(), id)) {
                    return h;
                }
            }
        }
        return null;
    }

    private static QuarantinedDevice quarantine(List<String> ids, List<QuarantinedDevice> quarantine) {
        for (String id : ids) {
            for (QuarantinedDevice q : quarantine) {
                if (takes(q.deviceId(), id)) {
                    return q;
                }
            }
        }
        return null;
    }
}
