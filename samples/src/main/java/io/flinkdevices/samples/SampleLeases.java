package io.flinkdevices.samples;

import io.flinkdevices.job.DeviceLease;
import io.flinkdevices.job.DeviceLeases;

import org.apache.flink.api.common.functions.RuntimeContext;

import java.util.Optional;

/**
 * How the samples take their device: a lease of the task's own device (or share of one), or none
 * when the TaskManager received no device of the resource, in which case a sample takes its CPU
 * path and says why.
 */
public final class SampleLeases {

    private SampleLeases() {}

    /**
     * The task's lease of {@code share} of one device of {@code resource}; empty when its
     * TaskManager has none of that resource.
     *
     * @throws io.flinkdevices.job.DeviceLeaseException when the devices are all held by other tasks
     */
    public static Optional<DeviceLease> lease(RuntimeContext context, String resource, double share) {
        if (context.getExternalResourceInfos(resource).isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(DeviceLeases.acquire(context, resource, share));
    }
}
