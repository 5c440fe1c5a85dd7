package io.flinkdevices.cli.render;

import io.flinkdevices.cli.flink.PodNeeds;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one resource needs from Kubernetes or Yarn for each TaskManager.
 *
 * @param resource the resource name from {@code external-resources}
 * @param amount its amount, the quantity Flink requests for its config key
 * @param requests resource name to quantity, sorted by name
 * @param nodeSelector node labels the TaskManager pod must match (Kubernetes only)
 * @param fromDriver whether the driver said so, or the operator's config key did
 * @param pod what the TaskManager container needs beyond the devices (Yarn: its environment only)
 */
public record ResourceNeeds(
        String resource,
        long amount,
        Map<String, Long> requests,
        Map<String, String> nodeSelector,
        boolean fromDriver,
        PodNeeds pod) {

    public ResourceNeeds {
        // sorted by name, so that output and choices do not depend on a driver's map order
        requests = Collections.unmodifiableMap(new TreeMap<>(requests));
        nodeSelector = Collections.unmodifiableMap(new TreeMap<>(nodeSelector));
        pod = pod == null ? PodNeeds.NONE : pod;
    }

    /** Needs with nothing for the container beyond the devices. */
    public ResourceNeeds(
            String resource, long amount, Map<String, Long> requests, Map<String, String> nodeSelector, boolean fromDriver) {
        this(resource, amount, requests, nodeSelector, fromDriver, PodNeeds.NONE);
    }
}
