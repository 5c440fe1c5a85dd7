package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.info.GpuInfo;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The TaskManager's own {@code CUDA_VISIBLE_DEVICES}, read with the SDK's {@link
 * io.flinkdevices.sdk.host.VisibleDevices}: unset means every GPU; empty or {@code NoDevFiles}
 * means none; otherwise a comma-separated list of indexes or UUIDs ({@code GPU-...} or {@code
 * MIG-...}, a unique prefix as CUDA accepts), in the order CUDA would number them. A prefix of
 * several UUIDs is an error (CUDA selects no device for it), and so is an index in digits other
 * than 0-9.
 */
final class VisibleDevices {

    /** The variable CUDA reads. */
    static final String ENV = "CUDA_VISIBLE_DEVICES";

    private final io.flinkdevices.sdk.host.VisibleDevices variable;

    private VisibleDevices(io.flinkdevices.sdk.host.VisibleDevices variable) {
        this.variable = variable;
    }

    /** Reads the variable from {@code environment} (the TaskManager's). */
    static VisibleDevices from(Map<String, String> environment) {
        return new VisibleDevices(
                io.flinkdevices.sdk.host.VisibleDevices.read(environment, ENV, "GPU")
                        .withIdPrefixes("GPU-", "MIG-")
                        .withNoneWords("NoDevFiles"));
    }

    /** Whether the variable is set. */
    boolean restricts() {
        return variable.restricts();
    }

    /** {@code CUDA_VISIBLE_DEVICES='...'}, for messages. */
    String describe() {
        return variable.describe();
    }

    /**
     * The devices the variable allows, in its order.
     *
     * @param parentOf for a MIG unit, its GPU; an entry naming the GPU allows all its units
     * @throws DeviceDriverException naming the variable when an entry matches no device
     */
    List<GpuInfo> apply(List<GpuInfo> devices, Map<GpuInfo, GpuRef> parentOf)
            throws DeviceDriverException {
        return variable.apply(
                devices,
                d -> {
                    List<io.flinkdevices.sdk.host.VisibleDevices.Name> names = new ArrayList<>(2);
                    names.add(io.flinkdevices.sdk.host.VisibleDevices.name(d.getIndex(), d.getUuid().orElse(null)));
                    GpuRef parent = parentOf.get(d);
                    if (parent != null) {
                        names.add(io.flinkdevices.sdk.host.VisibleDevices.name(parent.index, parent.uuid.orElse(null)));
                    }
                    return names;
                });
    }

    /** A whole GPU as a MIG unit's parent. */
    static final class GpuRef {
        final int index;
        final Optional<String> uuid;

        GpuRef(int index, Optional<String> uuid) {
            this.index = index;
            this.uuid = uuid;
        }
    }
}
