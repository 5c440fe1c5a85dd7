package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.info.GpuInfo;

import java.util.List;

/** One way of finding the host's NVIDIA GPUs. */
interface Backend {

    /** The backend's name as the {@code backend} parameter spells it, with what it runs. */
    String describe();

    /**
     * The devices this TaskManager may use, in preference order. {@code amount} is what the
     * driver was asked for (a discovery script returns only that many). Backends that list every
     * GPU of the host (nvidia-smi) apply the TaskManager's {@code CUDA_VISIBLE_DEVICES}; with JCuda
     * CUDA applies it; a discovery script decides itself, as under Flink's GPU plugin.
     */
    List<GpuInfo> devices(long amount) throws DeviceDriverException;

    /**
     * The device's id in the coordination file: the UUID, or the index when the backend knows
     * none; a MIG unit's is {@code <GPU id>/<MIG UUID>}, so that the unit and its GPU exclude each
     * other across TaskManagers with different {@code mig} settings.
     */
    default String coordinationId(GpuInfo d) {
        return d.getUuid().orElse(Integer.toString(d.getIndex()));
    }

}
