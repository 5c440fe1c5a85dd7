package io.flinkdevices.testkit.simulated;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.deploy.YarnResourceDecorator;
import io.flinkdevices.sdk.info.GpuInfo;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;

import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/** The simulated GPU host's driver: immutable, deterministic, safe to share between threads. */
final class SimulatedGpuDriver
        implements ExternalResourceDriver, KubernetesResourceDecorator, YarnResourceDecorator {

    private static final String PARAM_INFIX = ".param.";

    private final int count;
    private final String vendor;
    private final String name;
    private final long memoryBytes;
    private final String failWith;
    private final String keyPrefix;

    SimulatedGpuDriver(
            int count,
            String vendor,
            String name,
            long memoryBytes,
            String failWith,
            String keyPrefix) {
        this.count = count;
        this.vendor = vendor;
        this.name = name;
        this.memoryBytes = memoryBytes;
        this.failWith = failWith;
        this.keyPrefix = keyPrefix;
    }

    @Override
    public Set<GpuInfo> retrieveResourceInfo(long amount) throws DeviceDriverException {
        if (failWith != null) {
            throw new DeviceDriverException(failWith);
        }
        if (amount <= 0) {
            throw new DeviceDriverException(
                    amountKey() + " must be a positive number of GPUs but is " + amount);
        }
        if (amount > count) {
            throw new DeviceDriverException(
                    amountKey()
                            + " asks for "
                            + amount
                            + " GPUs but the simulated host has only "
                            + count
                            + " ("
                            + keyPrefix
                            + SimulatedGpuDriverFactory.PARAM_COUNT
                            + " = "
                            + count
                            + ")");
        }
        Set<GpuInfo> infos = new LinkedHashSet<>();
        for (int index = 0; index < amount; index++) {
            infos.add(
                    GpuInfo.builder(vendor, index)
                            .uuid("SIM-GPU-" + index)
                            .name(name)
                            .memoryBytes(memoryBytes)
                            .architecture(SimulatedGpuDriverFactory.ARCHITECTURE)
                            .pciAddress(pciAddress(index))
                            .visibleDevices(
                                    SimulatedGpuDriverFactory.VISIBLE_DEVICES_ENV,
                                    Integer.toString(index))
                            .build());
        }
        return infos;
    }

    @Override
    public Map<String, Long> kubernetesResources(long amount) {
        return Map.of(SimulatedGpuDriverFactory.KUBERNETES_RESOURCE, amount);
    }

    @Override
    public Map<String, Long> yarnResources(long amount) {
        return Map.of(SimulatedGpuDriverFactory.YARN_RESOURCE, amount);
    }

    @Override
    public String toString() {
        return "SimulatedGpuDriver{count="
                + count
                + ", vendor="
                + vendor
                + (failWith == null ? "" : ", fail-with=" + failWith)
                + "}";
    }

    /** {@code 0000:01:00.0} for GPU 0, one bus per GPU, as on a typical multi-GPU server. */
    static String pciAddress(int index) {
        int bus = index + 1;
        return String.format("%04x:%02x:00.0", bus >>> 8, bus & 0xff);
    }

    /** The amount key of this resource, e.g. {@code external-resource.gpu.amount}. */
    private String amountKey() {
        if (keyPrefix.endsWith(PARAM_INFIX)) {
            return keyPrefix.substring(0, keyPrefix.length() - PARAM_INFIX.length()) + ".amount";
        }
        return "external-resource.<resource>.amount";
    }
}
