package io.flinkdevices.nvidia;

import com.sun.jna.Pointer;

/** One {@code nvmlEventData_t}: the GPU, the event type, its data (the Xid) and the MIG instance ids. */
final class NvmlEvent {
    final Pointer device;
    final long type;
    final long data;
    final int gpuInstanceId;
    final int computeInstanceId;

    NvmlEvent(Pointer device, long type, long data, int gpuInstanceId, int computeInstanceId) {
        this.device = device;
        this.type = type;
        this.data = data;
        this.gpuInstanceId = gpuInstanceId;
        this.computeInstanceId = computeInstanceId;
    }

    /** Whether the event concerns the whole GPU rather than one MIG instance. */
    boolean wholeGpu() {
        return gpuInstanceId == NvmlLibrary.ALL_INSTANCES && computeInstanceId == NvmlLibrary.ALL_INSTANCES;
    }

    @Override
    public String toString() {
        return "event type 0x" + Long.toHexString(type) + " data " + data + " gi " + gpuInstanceId + " ci " + computeInstanceId;
    }
}
