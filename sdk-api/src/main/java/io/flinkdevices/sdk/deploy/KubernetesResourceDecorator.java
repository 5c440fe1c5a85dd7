package io.flinkdevices.sdk.deploy;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Map;

/**
 * Implemented by a driver that can say what a Kubernetes TaskManager pod must request.
 *
 * <p>Optional: callers test {@code driver instanceof KubernetesResourceDecorator}. Flink never
 * calls it (Flink reads only {@code external-resource.<name>.kubernetes.config-key}); the {@code
 * flink-devices} CLI turns these maps into Flink config lines and a pod template. The interface
 * deals in plain maps so that no Kubernetes class is ever needed by a driver.
 */
@PublicEvolving
public interface KubernetesResourceDecorator {

    /**
     * Extended resources a TaskManager pod needs for {@code amount} devices: resource name (for
     * example {@code nvidia.com/gpu}) to a whole-number quantity. Names and quantities must pass
     * {@link KubernetesResourceNames#validateExtendedResource(String)} and {@link
     * KubernetesResourceNames#validateQuantity(String, long)}.
     */
    Map<String, Long> kubernetesResources(long amount);

    /** Node-selector labels the pod needs, for example the GPU product; empty by default. */
    default Map<String, String> kubernetesNodeSelector() {
        return Map.of();
    }
}
