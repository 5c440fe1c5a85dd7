package io.flinkdevices.sdk.deploy;

import io.flinkdevices.sdk.config.DriverParams;

import org.apache.flink.annotation.PublicEvolving;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a driver's Kubernetes DRA claim selects from the shared {@link DraParams} params: the
 * DeviceClass (the param, else the driver's default), the {@code productName} attribute and the
 * least {@code memory} capacity. A driver returns {@link #deviceClass()}, {@link #attributes()}
 * (adding its own, such as a MIG or partition profile) and {@link #minimumCapacity()} from the DRA
 * methods of {@link KubernetesResourceDecorator}.
 *
 * <pre>{@code
 * DraSelection dra = DraSelection.read(params, "gpu.nvidia.com"); // before params.validate()
 * }</pre>
 */
@PublicEvolving
public final class DraSelection {

    private final String deviceClass;
    private final String productName;
    private final String minMemory;

    private DraSelection(String deviceClass, String productName, String minMemory) {
        this.deviceClass = deviceClass;
        this.productName = productName;
        this.minMemory = minMemory;
    }

    /**
     * Reads the three params, recording a problem on {@code params} for each bad one (reported by
     * {@link DriverParams#validate()}).
     *
     * @param defaultClass the DeviceClass when the param is unset; empty or null for none
     */
    public static DraSelection read(DriverParams params, String defaultClass) {
        return new DraSelection(
                DraParams.deviceClass(params, defaultClass),
                DraParams.productName(params),
                DraParams.minMemory(params));
    }

    /** The DeviceClass; empty when neither the param nor the driver names one. */
    public String deviceClass() {
        return deviceClass;
    }

    /** {@code productName} when asked for, in a new map the caller may add its own attributes to. */
    public Map<String, String> attributes() {
        Map<String, String> attributes = new LinkedHashMap<>();
        if (productName != null) {
            attributes.put("productName", productName);
        }
        return attributes;
    }

    /** {@code memory} to the least quantity when asked for; empty otherwise. */
    public Map<String, String> minimumCapacity() {
        return minMemory == null ? Map.of() : Map.of("memory", minMemory);
    }
}
