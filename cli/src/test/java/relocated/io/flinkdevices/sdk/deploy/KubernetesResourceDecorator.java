package relocated.io.flinkdevices.sdk.deploy;

import java.util.Map;

/**
 * sdk-api's Kubernetes decorator as a plugin built before the DRA methods has it, relocated under a
 * prefix as a shading plugin would: only {@code kubernetesResources} and {@code
 * kubernetesNodeSelector}.
 */
public interface KubernetesResourceDecorator {

    /** Extended resources for {@code amount} devices. */
    Map<String, Long> kubernetesResources(long amount);

    /** Node labels. */
    default Map<String, String> kubernetesNodeSelector() {
        return Map.of();
    }
}
