package io.flinkdevices.example.acme;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.info.GpuInfo;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;

import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Hands a TaskManager the first {@code amount} Acme Tensor Sticks {@code acme-smi} lists, in index
 * order. Supports Kubernetes (sticks are the extended resource {@value #KUBERNETES_RESOURCE});
 * there is no Yarn resource type for them, so it does not implement the Yarn decorator.
 */
final class AcmeTensorStickDriver implements ExternalResourceDriver, KubernetesResourceDecorator {

    /** The extended resource Acme's Kubernetes device plugin advertises. */
    static final String KUBERNETES_RESOURCE = "acme.example.com/tensor-stick";

    private final AcmeSmi smi;
    private final String amountKey;

    AcmeTensorStickDriver(AcmeSmi smi, String amountKey) {
        this.smi = smi;
        this.amountKey = amountKey;
    }

    @Override
    public Set<GpuInfo> retrieveResourceInfo(long amount) throws DeviceDriverException {
        if (amount <= 0) {
            throw new DeviceDriverException(
                    amountKey + ": the amount of Acme Tensor Sticks must be at least 1 but is "
                            + amount);
        }
        List<GpuInfo> sticks = smi.listSticks();
        if (sticks.size() < amount) {
            throw new DeviceDriverException(
                    "Asked for "
                            + amount
                            + " Acme Tensor Sticks but "
                            + smi.describe()
                            + " lists "
                            + sticks.size()
                            + ": "
                            + sticks.stream()
                                    .map(s -> "stick " + s.getIndex())
                                    .collect(Collectors.toList())
                            + ". Lower "
                            + amountKey
                            + " or check the host.");
        }
        return Collections.unmodifiableSet(
                new LinkedHashSet<>(sticks.subList(0, (int) amount)));
    }

    @Override
    public Map<String, Long> kubernetesResources(long amount) {
        return Map.of(KUBERNETES_RESOURCE, amount);
    }
}
