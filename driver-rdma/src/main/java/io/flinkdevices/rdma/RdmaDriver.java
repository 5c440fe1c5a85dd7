package io.flinkdevices.rdma;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.deploy.YarnResourceDecorator;
import io.flinkdevices.sdk.health.DeviceMonitor;
import io.flinkdevices.sdk.health.MonitorSettings;
import io.flinkdevices.sdk.host.Sysfs;
import io.flinkdevices.sdk.info.LiveProperties;
import io.flinkdevices.sdk.info.RdmaInfo;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Hands a TaskManager {@code amount} healthy RDMA ports that match the selectors, in sysfs order,
 * degraded ones (ACTIVE while the link recovers from errors) after every healthy one:
 * exclusively (through the device coordinator when coordination is on) or shared (every
 * TaskManager of the host may get the same ports, as the shared device plugin hands them out).
 */
final class RdmaDriver implements ExternalResourceDriver, KubernetesResourceDecorator, YarnResourceDecorator, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RdmaDriver.class);

    private final SysfsPorts sysfs;
    private final Selection selection;
    private final DeviceCoordinator coordinator;
    private final boolean shared;
    private final String amountKey;
    private final String kubernetesName;
    private final String yarnName;
    private final VerbsProbe verbs;
    private final String draDeviceClass;
    private final MonitorSettings monitorSettings;
    private final Sysfs sys;
    /** The monitor of the ports last handed out; null before or when monitoring is off. */
    private DeviceMonitor monitor;

    /**
     * @param verbs the verbs probe, or null when it is off
     * @param draDeviceClass the DRA DeviceClass of the NICs, empty when not configured
     */
    RdmaDriver(SysfsPorts sysfs, Selection selection, DeviceCoordinator coordinator, boolean shared,
            String amountKey, String kubernetesName, String yarnName, VerbsProbe verbs, String draDeviceClass,
            MonitorSettings monitorSettings, Sysfs sys) {
        this.draDeviceClass = draDeviceClass;
        this.monitorSettings = monitorSettings;
        this.sys = sys;
        this.sysfs = sysfs;
        this.selection = selection;
        this.coordinator = coordinator;
        this.shared = shared;
        this.amountKey = amountKey;
        this.kubernetesName = kubernetesName;
        this.yarnName = yarnName;
        this.verbs = verbs;
    }

    @Override
    public Set<RdmaInfo> retrieveResourceInfo(long amount) throws DeviceDriverException {
        if (amount <= 0) {
            throw new DeviceDriverException(amountKey + ": the amount of RDMA ports must be at least 1 but is " + amount);
        }
        List<String> leftOut = new ArrayList<>();
        List<RdmaPort> all = sysfs.ports(leftOut);
        Map<String, RdmaPort> offered = new LinkedHashMap<>();
        List<String> notOffered = new ArrayList<>();
        for (RdmaPort p : all) {
            Optional<String> why = selection.rejection(p);
            if (why.isPresent()) {
                notOffered.add(p.id() + ": " + why.get());
            } else {
                offered.put(p.id(), p);
            }
        }
        if (verbs != null) {
            Map<String, String> failed = verbs.failures(new ArrayList<>(offered.values()));
            failed.forEach((id, why) -> {
                offered.remove(id);
                notOffered.add(id + ": " + why);
            });
        }
        if (!notOffered.isEmpty()) {
            LOG.info("RDMA ports not offered: {}", notOffered);
        }
        if (offered.size() < amount) {
            throw new DeviceDriverException(
                    "Asked for " + amount + " RDMA ports (" + amountKey + ") but " + sysfs.describe() + " has "
                            + offered.size() + " that are healthy and match the selectors" + (offered.isEmpty() ? "" : " " + offered.keySet())
                            + (all.isEmpty() ? "; the host has no RDMA port" + (leftOut.isEmpty() ? "" : " it could read")
                                    : "; every port: " + describe(all, notOffered))
                            + (leftOut.isEmpty() ? "" : "; left out while they vanished or were half there (a driver"
                                    + " reload or hot removal?): " + leftOut)
                            + (offered.isEmpty() ? ". Change the selectors or check the ports"
                                    : ". Lower " + amountKey + " to " + offered.size() + ", or change the selectors"));
        }
        List<String> ids = new ArrayList<>();
        for (boolean degraded : new boolean[] {false, true}) {
            for (RdmaPort p : offered.values()) {
                if (p.degraded() == degraded) {
                    ids.add(p.id());
                }
            }
        }
        List<String> chosen = coordinator == null || shared ? ids.subList(0, (int) amount) : coordinator.allocate(ids, amount);
        DeviceMonitor m = monitor(chosen);
        Set<RdmaInfo> infos = new LinkedHashSet<>();
        for (String id : chosen) {
            infos.add(info(offered.get(id), m == null ? LiveProperties.NONE : m.properties(id)));
        }
        // the line an operator looks for in the TaskManager's log
        LOG.info("RDMA driver ({}, {}) for {}: handing out {}", sysfs.describe(), shared ? "shared" : "exclusive", amountKey, chosen);
        return Collections.unmodifiableSet(infos);
    }

    /**
     * One monitor per driver instance, of the ports it handed out last: Flink asks once per
     * TaskManager; a second call (a tool, a test) replaces the first monitor.
     */
    private synchronized DeviceMonitor monitor(List<String> chosen) {
        if (monitor != null) {
            monitor.stop();
            monitor = null;
        }
        if (monitorSettings == null || !monitorSettings.enabled()) {
            return null;
        }
        monitor = DeviceMonitor.create(monitorSettings, chosen, new PortSampler(sys));
        if (coordinator != null && !shared) {
            // a port that failed leaves service for every TaskManager of the host, whatever the action
            monitor.addListener(coordinator.quarantine().listener(monitorSettings));
        }
        monitor.start();
        LOG.info("RDMA monitor for {}: {} sampled {}", amountKey, chosen, monitorSettings);
        return monitor;
    }

    /**
     * Ends what {@link #retrieveResourceInfo} started (sdk-api's driver lifecycle): the monitor and
     * the coordination records of the ports this driver took. Flink never calls it; the CLI and
     * tests do. Safe to call twice.
     */
    @Override
    public synchronized void close() throws DeviceDriverException {
        stopMonitor();
        if (coordinator != null) {
            coordinator.releaseAllocated();
        }
    }

    /** Stops the monitor (tests and tools; a TaskManager lets it end on its own). */
    synchronized void stopMonitor() {
        if (monitor != null) {
            monitor.stop();
        }
    }

    private static List<String> describe(List<RdmaPort> all, List<String> notOffered) {
        List<String> out = new ArrayList<>();
        for (RdmaPort p : all) {
            String why = notOffered.stream().filter(n -> n.startsWith(p.id() + ": ")).findFirst()
                    .map(n -> n.substring(p.id().length() + 2)).orElse("offered");
            out.add(p + ": " + why);
        }
        return out;
    }

    private static RdmaInfo info(RdmaPort p, LiveProperties live) {
        RdmaInfo.Builder b =
                RdmaInfo.builder(p.device, p.port)
                        .live(live)
                        .linkLayer(p.linkLayer)
                        .state(p.state)
                        .gid(p.gid, p.gidType)
                        .netdev(p.netdev)
                        .nodeGuid(p.nodeGuid)
                        .pciAddress(p.pciAddress);
        if (p.gidIndex >= 0) {
            b.gidIndex(p.gidIndex);
        }
        if (p.numaNode >= 0) {
            b.numaNode(p.numaNode);
        }
        if (p.rateGbps >= 0) {
            b.rateGbps(p.rateGbps);
        }
        return b.build();
    }

    @Override
    public Map<String, Long> kubernetesResources(long amount) {
        return Map.of(kubernetesName, amount);
    }

    /** RDMA registers memory: the TaskManager container may lock it. */
    @Override
    public List<String> kubernetesCapabilities() {
        return List.of("IPC_LOCK");
    }

    @Override
    public List<String> kubernetesNeedsReasons() {
        return List.of("RDMA registers memory, which needs the IPC_LOCK capability (or an unlimited memlock limit)"
                + " in the TaskManager container; the template adds it to flink-main-container's securityContext");
    }

    @Override
    public Map<String, Long> yarnResources(long amount) {
        return Map.of(yarnName, amount);
    }

    /** The name of DraNet, the Kubernetes network DRA driver, and so its attribute domain. */
    static final String DRANET = "dra.net";

    @Override
    public String draDeviceClass() {
        return draDeviceClass;
    }

    @Override
    public String draAttributeDomain() {
        return DRANET;
    }

    @Override
    public Map<String, Boolean> draBooleanAttributes() {
        // DraNet: true when the interface has an RDMA device (RoCE or InfiniBand)
        return Map.of("rdma", true);
    }

    @Override
    public boolean draPublishesPcieRoot() {
        return true;
    }
}
