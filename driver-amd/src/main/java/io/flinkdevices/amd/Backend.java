package io.flinkdevices.amd;

import io.flinkdevices.sdk.DeviceDriverException;

import java.util.List;

/** One way of finding the host's AMD GPUs. */
interface Backend {

    /** The backend's name as the {@code backend} parameter spells it, with what it reads or runs. */
    String describe();

    /**
     * Every GPU agent of the host in ROCm's order: one per whole GPU, or one per compute partition
     * of a partitioned GPU.
     */
    List<AmdGpu> agents() throws DeviceDriverException;

    /**
     * What the last {@link #agents()} left out and why (agents of another vendor, say), for the
     * message when too few are found; empty when nothing was left out.
     */
    default String skipped() {
        return "";
    }
}
