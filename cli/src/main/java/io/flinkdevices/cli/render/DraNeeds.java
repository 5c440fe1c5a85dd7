package io.flinkdevices.cli.render;

import io.flinkdevices.cli.flink.DriverDecorators.DraDevices;
import io.flinkdevices.cli.flink.PodNeeds;

/**
 * What one resource needs under Kubernetes Dynamic Resource Allocation.
 *
 * @param resource the resource name from {@code external-resources}
 * @param amount its amount: the count of devices the claim requests
 * @param devices the driver's device class, attributes and capacities
 * @param pod what the TaskManager container needs beyond the devices
 */
public record DraNeeds(String resource, long amount, DraDevices devices, PodNeeds pod) {

    /** Needs with nothing for the container beyond the devices. */
    public DraNeeds(String resource, long amount, DraDevices devices) {
        this(resource, amount, devices, PodNeeds.NONE);
    }
}
