package io.flinkdevices.cli.render;

import io.flinkdevices.cli.flink.DriverDecorators.DraDevices;

/**
 * What one resource needs under Kubernetes Dynamic Resource Allocation.
 *
 * @param resource the resource name from {@code external-resources}
 * @param amount its amount: the count of devices the claim requests
 * @param devices the driver's device class, attributes and capacities
 */
public record DraNeeds(String resource, long amount, DraDevices devices) {}
