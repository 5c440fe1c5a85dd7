package io.flinkdevices.sdk.deploy;

import org.apache.flink.annotation.PublicEvolving;

import java.util.List;
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

    /*
     * What the TaskManager's main container needs beyond the devices themselves. The CLI renders
     * every answer into the pod template (render kubernetes and render flink-operator, with and
     * without --dra); KubernetesPodNeeds validates them as the API server would.
     */

    /**
     * Linux capabilities the main container must add, as Kubernetes spells them without {@code
     * CAP_} ({@code IPC_LOCK} for memory registration); empty by default.
     */
    default List<String> kubernetesCapabilities() {
        return List.of();
    }

    /**
     * Environment variables of the main container, name to value ({@code LD_PRELOAD}); empty by
     * default.
     */
    default Map<String, String> kubernetesEnvironment() {
        return Map.of();
    }

    /**
     * Host paths the main container must see at the same path (device files such as {@code
     * /dev/infiniband} or {@code /dev/kfd}), path to its {@code hostPath} type ({@code
     * CharDevice}, {@code Directory}, ..., or {@code ""} for no check); empty by default.
     */
    default Map<String, String> kubernetesHostPaths() {
        return Map.of();
    }

    /**
     * The host paths of the devices themselves that the main container must see for {@code amount}
     * devices, path to its {@code hostPath} type: one device node per card ({@code /dev/hexa0},
     * {@code /dev/hexa1}, ...), built with {@link DevicePaths#numbered}; empty by default. The CLI
     * renders them as {@link #kubernetesHostPaths()}.
     *
     * <p>Answer nothing when a Kubernetes device plugin hands out the devices (through {@link
     * #kubernetesResources}): it adds the nodes of the cards it allocates itself. Without one,
     * Kubernetes allocates no card: the pod is rendered before any card is chosen and sees the
     * nodes named here, and the driver picks its cards among them when the TaskManager starts (with
     * coordination where several TaskManagers share a node). Name the cards a TaskManager may be
     * handed: {@code 0} to {@code amount - 1} for one TaskManager per node, every card of the node
     * otherwise (a param of the driver).
     */
    default Map<String, String> kubernetesDevicePaths(long amount) {
        return Map.of();
    }

    /**
     * Resources the pod requests (and is limited to) besides the devices' extended resources, for
     * {@code amount} devices: name to Kubernetes quantity ({@code hugepages-2Mi: 1Gi}); empty by
     * default.
     */
    default Map<String, String> kubernetesExtraResources(long amount) {
        return Map.of();
    }

    /**
     * Tolerations the pod needs besides the one the CLI adds per extended resource, each a map of
     * {@code key}, {@code operator} ({@code Exists} or {@code Equal}), {@code value} and {@code
     * effect}; empty by default.
     */
    default List<Map<String, String>> kubernetesTolerations() {
        return List.of();
    }

    /**
     * Why the pod needs the answers above, one sentence each, which the CLI prints for the operator
     * ("RDMA registers memory, which needs IPC_LOCK"); empty by default.
     */
    default List<String> kubernetesNeedsReasons() {
        return List.of();
    }

    /*
     * Kubernetes Dynamic Resource Allocation (resource.k8s.io/v1). The CLI builds a
     * ResourceClaimTemplate from these answers: one request of draDeviceClass() for the amount,
     * one CEL selector per attribute and capacity below, all evaluated in the domain
     * draAttributeDomain(). Names are CEL identifiers (letters, digits, '_', not starting with a
     * digit); values are plain strings; capacities are Kubernetes quantities ("40Gi").
     */

    /**
     * The DRA {@code DeviceClass} whose devices are this driver's units (for example {@code
     * gpu.nvidia.com}); empty when the driver knows none, which the CLI reports naming {@link
     * DraParams#DEVICE_CLASS}.
     */
    default String draDeviceClass() {
        return "";
    }

    /**
     * The domain the devices' attributes and capacities are published under, usually the DRA
     * driver's name ({@code device.attributes["gpu.nvidia.com"]}); empty means the device class's
     * name.
     */
    default String draAttributeDomain() {
        return "";
    }

    /** String attributes a device must have, name to value ({@code productName}, {@code profile}). */
    default Map<String, String> draAttributes() {
        return Map.of();
    }

    /** Boolean attributes a device must have, name to value ({@code rdma: true}). */
    default Map<String, Boolean> draBooleanAttributes() {
        return Map.of();
    }

    /** Capacities a device must have at least, name to quantity ({@code memory: 40Gi}). */
    default Map<String, String> draMinimumCapacity() {
        return Map.of();
    }

    /**
     * Whether the devices publish the standard attribute {@link DraParams#PCIE_ROOT_ATTRIBUTE}, so
     * that a claim can ask for them under the same PCIe root as another resource's devices.
     */
    default boolean draPublishesPcieRoot() {
        return false;
    }
}
