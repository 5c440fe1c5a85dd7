package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.info.GpuInfo;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The TaskManager's own {@code CUDA_VISIBLE_DEVICES}: unset means every GPU; empty or {@code
 * NoDevFiles} means none; otherwise a comma-separated list of indexes or UUIDs ({@code GPU-...}
 * or {@code MIG-...}, a unique prefix as CUDA accepts), in the order CUDA would number them.
 */
final class VisibleDevices {

    /** The variable CUDA reads. */
    static final String ENV = "CUDA_VISIBLE_DEVICES";

    private final String raw;

    private VisibleDevices(String raw) {
        this.raw = raw;
    }

    /** Reads the variable from {@code environment} (the TaskManager's). */
    static VisibleDevices from(Map<String, String> environment) {
        return new VisibleDevices(environment.get(ENV));
    }

    /** Whether the variable is set. */
    boolean restricts() {
        return raw != null;
    }

    /** {@code CUDA_VISIBLE_DEVICES='...'}, for messages. */
    String describe() {
        return raw == null ? ENV + " unset" : ENV + "='" + raw + "'";
    }

    /**
     * The devices the variable allows, in its order.
     *
     * @param parentIndex for a MIG unit, the index of its GPU; an entry naming the GPU allows all
     *     its units
     * @throws DeviceDriverException naming the variable when an entry matches no device
     */
    List<GpuInfo> apply(List<GpuInfo> devices, Map<GpuInfo, GpuRef> parentOf)
            throws DeviceDriverException {
        if (raw == null) {
            return devices;
        }
        String value = raw.strip();
        if (value.isEmpty() || value.equals("NoDevFiles")) {
            if (devices.isEmpty()) {
                return List.of();
            }
            throw new DeviceDriverException(
                    describe()
                            + " hides every GPU from this TaskManager (an empty value or NoDevFiles"
                            + " means none), but the host has "
                            + devices.size()
                            + ": "
                            + devices.stream().map(d -> d.getIndex() + "=" + d.getUuid().orElse("?")).toList()
                            + "; expected the GPUs this TaskManager may use (indexes or UUIDs), or the"
                            + " variable unset. Fix the TaskManager's "
                            + ENV
                            + " or unset it");
        }
        Set<GpuInfo> allowed = new LinkedHashSet<>();
        for (String entry : Arrays.stream(value.split(",")).map(String::strip).toList()) {
            if (entry.isEmpty()) {
                throw new DeviceDriverException(
                        describe() + " has an empty entry; expected indexes or UUIDs separated by commas");
            }
            List<GpuInfo> matching = new ArrayList<>();
            for (GpuInfo d : devices) {
                GpuRef parent = parentOf.get(d);
                if (matches(entry, d.getIndex(), d.getUuid())
                        || (parent != null && matches(entry, parent.index(), parent.uuid()))) {
                    matching.add(d);
                }
            }
            if (matching.isEmpty()) {
                throw new DeviceDriverException(
                        describe()
                                + ": entry '"
                                + entry
                                + "' matches no GPU of this host; the host has "
                                + devices.stream()
                                        .map(d -> d.getIndex() + "=" + d.getUuid().orElse("?"))
                                        .toList()
                                + ". Fix the TaskManager's "
                                + ENV
                                + " or unset it");
            }
            allowed.addAll(matching);
        }
        return List.copyOf(allowed);
    }

    private static boolean matches(String entry, int index, Optional<String> uuid) {
        if (entry.chars().allMatch(Character::isDigit)) {
            try {
                return Integer.parseInt(entry) == index;
            } catch (NumberFormatException e) {
                return false;
            }
        }
        return uuid.isPresent()
                && (uuid.get().equalsIgnoreCase(entry)
                        || ((entry.startsWith("GPU-") || entry.startsWith("MIG-"))
                                && entry.length() > 4
                                && uuid.get().regionMatches(true, 0, entry, 0, entry.length())));
    }

    /** A whole GPU as a MIG unit's parent. */
    record GpuRef(int index, Optional<String> uuid) {}
}
