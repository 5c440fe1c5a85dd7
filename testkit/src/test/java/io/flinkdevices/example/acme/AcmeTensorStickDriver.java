package io.flinkdevices.example.acme;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.info.AcceleratorInfo;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Hands a TaskManager {@code amount} of the Acme Tensor Sticks {@code acme-smi} lists, does not
 * report failed and its {@value AcmeSmi#VISIBLE_DEVICES_ENV} lets it see, in index order, through
 * the coordination file when coordination is on, and logs at INFO which it handed out. Sticks are the Kubernetes extended resource {@value
 * #KUBERNETES_RESOURCE}; there is no Yarn resource type for them.
 */
final class AcmeTensorStickDriver implements ExternalResourceDriver, KubernetesResourceDecorator, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(AcmeTensorStickDriver.class);

    /** The extended resource Acme's Kubernetes device plugin advertises. */
    static final String KUBERNETES_RESOURCE = "acme.example.com/tensor-stick";

    private final AcmeSmi smi;
    private final String visibleDevices;
    private final DeviceCoordinator coordinator;
    private final String amountKey;

    /**
     * @param visibleDevices the TaskManager's {@value AcmeSmi#VISIBLE_DEVICES_ENV}: stick indexes
     *     separated by commas, or null for every stick
     * @param coordinator null when coordination is off
     */
    AcmeTensorStickDriver(
            AcmeSmi smi, String visibleDevices, DeviceCoordinator coordinator, String amountKey) {
        this.smi = smi;
        this.visibleDevices = visibleDevices;
        this.coordinator = coordinator;
        this.amountKey = amountKey;
    }

    @Override
    public Set<AcceleratorInfo> retrieveResourceInfo(long amount) throws DeviceDriverException {
        if (amount <= 0 && !Mutant.on("zero-amount-accepted")) { // mutation run
            throw new DeviceDriverException(
                    amountKey + ": the amount of Acme Tensor Sticks must be at least 1 but is " + amount);
        }
        List<AcceleratorInfo> listed = new ArrayList<>();
        Set<AcceleratorInfo> failedSticks = new HashSet<>();
        for (AcmeSmi.Stick stick : smi.listSticks()) {
            listed.add(stick.info());
            if (stick.failed()) {
                failedSticks.add(stick.info());
            }
        }
        List<AcceleratorInfo> sticks = new ArrayList<>();
        List<Integer> failed = new ArrayList<>();
        for (AcceleratorInfo stick : visible(listed)) {
            if (failedSticks.contains(stick) && !Mutant.on("failed-handed-out")) { // mutation run
                failed.add(stick.getIndex());
            } else {
                sticks.add(stick);
            }
        }
        if (sticks.size() < amount && !Mutant.on("fewer-than-asked")) { // mutation run
            throw new DeviceDriverException(
                    "Asked for " + amount + " Acme Tensor Sticks but " + smi.describe() + " lists "
                            + sticks.size() + " this TaskManager may use"
                            + (failed.isEmpty() ? "" : " (sticks " + failed + " are failed)")
                            + ". Lower " + amountKey + " or check the host.");
        }
        int n = (int) Math.min(amount + (Mutant.on("more-infos-than-asked") ? 1 : 0), sticks.size()); // mutation run
        List<AcceleratorInfo> chosen = coordinator == null ? sticks.subList(0, n) : allocate(sticks, n);
        if (!Mutant.on("silent-handout")) { // mutation run
            LOG.info("Acme Tensor Stick driver ({}) for {}: handing out {} of {} sticks: {}",
                    smi.describe(), amountKey, chosen.size(), listed.size(), chosen);
        }
        return Collections.unmodifiableSet(new LinkedHashSet<>(chosen));
    }

    /** The sticks {@value AcmeSmi#VISIBLE_DEVICES_ENV} lets this TaskManager use, in its order. */
    private List<AcceleratorInfo> visible(List<AcceleratorInfo> sticks) throws DeviceDriverException {
        if (visibleDevices == null || Mutant.on("visible-devices-ignored")) { // mutation run
            return sticks;
        }
        List<AcceleratorInfo> allowed = new ArrayList<>();
        for (String entry : visibleDevices.split(",", -1)) {
            AcceleratorInfo match = null;
            for (AcceleratorInfo stick : sticks) {
                if (stick.getVisibleDevicesValue().orElseThrow().equals(entry.strip())) {
                    match = stick;
                }
            }
            if (match == null && !visibleDevices.isBlank()) {
                throw new DeviceDriverException(
                        AcmeSmi.VISIBLE_DEVICES_ENV + "='" + visibleDevices + "': entry '" + entry
                                + "' is no stick " + smi.describe() + " lists; expected stick indexes separated by commas");
            }
            if (match != null && !allowed.contains(match)) {
                allowed.add(match);
            }
        }
        return allowed;
    }

    private List<AcceleratorInfo> allocate(List<AcceleratorInfo> sticks, int amount)
            throws DeviceDriverException {
        if (Mutant.on("coordination-ignored")) { // mutation run
            return sticks.subList(0, amount);
        }
        List<String> ids = new ArrayList<>();
        for (AcceleratorInfo stick : sticks) {
            ids.add(Integer.toString(stick.getIndex()));
        }
        List<String> taken = Mutant.on("coordination-leak") // mutation run
                ? Mutant.allocateOneByOne(coordinator, ids, amount)
                : coordinator.allocate(ids, amount);
        List<AcceleratorInfo> chosen = new ArrayList<>();
        for (AcceleratorInfo stick : sticks) {
            if (taken.contains(Integer.toString(stick.getIndex()))) {
                chosen.add(stick);
            }
        }
        return chosen;
    }

    /**
     * Releases the sticks this driver took through the coordination file (sdk-api's driver
     * lifecycle: Flink never calls it, a TaskManager's records go with its process; tools and
     * tests that hold a driver call it). Safe to call twice.
     */
    @Override
    public void close() throws DeviceDriverException {
        if (coordinator == null || Mutant.on("close-keeps-records")) { // mutation run
            return;
        }
        coordinator.releaseAllocated();
    }

    @Override
    public Map<String, Long> kubernetesResources(long amount) {
        return Mutant.on("mutable-decorator-map") // mutation run
                ? new java.util.HashMap<>(Map.of(KUBERNETES_RESOURCE, amount))
                : Map.of(KUBERNETES_RESOURCE, amount);
    }
}
