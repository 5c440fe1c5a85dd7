package io.flinkdevices.amd;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.deploy.DraSelection;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.deploy.YarnResourceDecorator;
import io.flinkdevices.sdk.health.DeviceMonitor;
import io.flinkdevices.sdk.health.MonitorSettings;
import io.flinkdevices.sdk.host.Sysfs;
import io.flinkdevices.sdk.host.VisibleDevices;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.sdk.info.LiveProperties;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Hands a TaskManager {@code amount} AMD GPUs or compute partitions found by its backend, in the
 * backend's order, after the TaskManager's own visible-devices variables, through the device
 * coordinator when coordination is on.
 */
final class AmdGpuDriver implements ExternalResourceDriver, KubernetesResourceDecorator, YarnResourceDecorator, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(AmdGpuDriver.class);

    /** What ROCm's lowest layer reads; indexes and {@code GPU-<unique id>} work across releases. */
    static final String ROCR = "ROCR_VISIBLE_DEVICES";
    /** What HIP reads first. */
    static final String HIP = "HIP_VISIBLE_DEVICES";
    /** What HIP reads when HIP_VISIBLE_DEVICES is unset (HIP keeps CUDA's name working). */
    static final String CUDA = "CUDA_VISIBLE_DEVICES";
    /** What HIP reads when neither is set, and what AMD's OpenCL reads. */
    static final String ORDINAL = "GPU_DEVICE_ORDINAL";

    private final Backend backend;
    private final Unit unit;
    private final String partitionProfile;
    /** ROCR, then HIP's three in the order HIP reads them. */
    private final List<VisibleDevices> visibleVariables;
    private final DeviceCoordinator coordinator;
    private final String amountKey;
    private final String kubernetesName;
    private final Map<String, String> nodeSelector;
    private final String yarnName;
    private final Dra dra;
    private MonitorSettings monitorSettings;
    private Sysfs monitorSysfs;
    private java.nio.file.Path monitorDevRoot;
    /** The monitor of the units last handed out; null before or when monitoring is off. */
    private DeviceMonitor monitor;

    /** Monitors the handed-out units through sysfs (whatever backend discovered them). */
    void monitorWith(MonitorSettings settings, Sysfs sys, java.nio.file.Path devRoot) {
        this.monitorSettings = settings;
        this.monitorSysfs = sys;
        this.monitorDevRoot = devRoot;
    }

    /**
     * Ends what {@link #retrieveResourceInfo} started (sdk-api's driver lifecycle): the monitor and
     * the coordination records of the units this driver took. Flink never calls it; the CLI and
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

    /**
     * One monitor per driver instance, of the units it handed out last; a partition is sampled
     * through its GPU's PCI device (partition 0's render node), so it reports its parent's health.
     */
    private synchronized DeviceMonitor monitor(List<String> chosen, Map<String, List<AmdGpu>> units, List<AmdGpu> agents) {
        if (monitor != null) {
            monitor.stop();
            monitor = null;
        }
        if (monitorSettings == null || !monitorSettings.enabled()) {
            return null;
        }
        monitor = DeviceMonitor.create(monitorSettings, chosen, new GpuSampler(monitorSysfs, monitorDevRoot, GpuSampler.targets(chosen, units, agents)));
        if (coordinator != null) {
            // a failed unit leaves service for every TaskManager of the host, whatever the action
            monitor.addListener(coordinator.quarantine().listener(monitorSettings));
        }
        monitor.start();
        LOG.info("AMD GPU monitor for {}: {} sampled {}", amountKey, chosen, monitorSettings);
        return monitor;
    }

    /**
     * The units whose GPU or own render node is gone at start (what the monitor would call {@code
     * failed}), with the reason: never offered. RAS counts are judged against the first sample, so
     * they fail a unit only while it runs. Units the sample calls {@code degraded} go into {@code
     * degraded}: offered after every other one.
     */
    private Map<String, String> failedAtStart(Map<String, List<AmdGpu>> units, List<AmdGpu> agents, Set<String> degraded) {
        Map<String, String> failed = new LinkedHashMap<>();
        if (monitorSysfs == null || !monitorSysfs.exists("class/drm") || !java.nio.file.Files.isDirectory(monitorDevRoot.resolve("dri"))) {
            return failed; // a host (or a test's fake tool) without DRM devices: nothing to judge by
        }
        Map<String, GpuSampler.Target> targets = GpuSampler.targets(new ArrayList<>(units.keySet()), units, agents);
        // plain loops, no lambdas: this runs at TaskManager start, where every new lambda costs a class
        for (java.util.Iterator<GpuSampler.Target> it = targets.values().iterator(); it.hasNext(); ) {
            if (it.next().gpuMinor < 0) {
                it.remove();
            }
        }
        List<String> ids = new ArrayList<>(targets.keySet());
        GpuSampler sampler = new GpuSampler(monitorSysfs, monitorDevRoot, targets);
        Map<String, io.flinkdevices.sdk.health.DeviceSample> samples;
        try {
            samples = sampler.sample(ids);
        } catch (DeviceDriverException garbage) {
            // a number that is garbage on one GPU says nothing of its health (the monitor counts such
            // samples as failed, never the GPU): judge the others one by one, offer that one
            samples = new LinkedHashMap<>();
            for (String id : ids) {
                try {
                    samples.putAll(sampler.sample(List.of(id)));
                } catch (DeviceDriverException e) {
                    LOG.warn("AMD GPU driver for {}: the health of {} cannot be judged at start, offered: {}", amountKey, id,
                            e.getMessage());
                }
            }
        }
        for (Map.Entry<String, io.flinkdevices.sdk.health.DeviceSample> e : samples.entrySet()) {
            if (e.getValue().health() == io.flinkdevices.sdk.health.HealthState.FAILED) {
                failed.put(e.getKey(), e.getValue().reason());
            } else if (e.getValue().health() == io.flinkdevices.sdk.health.HealthState.DEGRADED) {
                degraded.add(e.getKey());
            }
        }
        return failed;
    }

    /**
     * What a DRA claim for this driver's units asks for: the shared selection ({@code gpu.amd.com}
     * unless set, product name, least memory) and the full key of the partition profile for
     * messages.
     */
    static final class Dra {
        final DraSelection selection;
        final String profileKey;

        Dra(DraSelection selection, String profileKey) {
            this.selection = selection;
            this.profileKey = profileKey;
        }
    }

    AmdGpuDriver(
            Backend backend,
            Unit unit,
            String partitionProfile,
            Map<String, String> environment,
            DeviceCoordinator coordinator,
            String amountKey,
            String kubernetesName,
            Map<String, String> nodeSelector,
            String yarnName,
            Dra dra) {
        this.dra = dra;
        this.backend = backend;
        this.unit = unit;
        this.partitionProfile = partitionProfile;
        List<VisibleDevices> variables = new ArrayList<>();
        for (String name : List.of(ROCR, HIP, CUDA, ORDINAL)) {
            variables.add(VisibleDevices.read(environment, name, "AMD GPU agent").withIdPrefixes("GPU-"));
        }
        this.visibleVariables = List.copyOf(variables);
        this.coordinator = coordinator;
        this.amountKey = amountKey;
        this.kubernetesName = kubernetesName;
        this.nodeSelector = Collections.unmodifiableMap(new LinkedHashMap<>(nodeSelector));
        this.yarnName = yarnName;
    }

    Backend backend() {
        return backend;
    }

    @Override
    public Set<GpuInfo> retrieveResourceInfo(long amount) throws DeviceDriverException {
        String what = unit == Unit.GPU ? "AMD GPUs" : "AMD GPU partitions" + (partitionProfile == null ? "" : " of profile " + partitionProfile);
        if (amount <= 0) {
            throw new DeviceDriverException(amountKey + ": the amount of " + what + " must be at least 1 but is " + amount);
        }
        List<AmdGpu> agents = visible(distinct(backend.agents()));
        Map<String, List<AmdGpu>> units = units(agents);
        Set<String> degraded = new java.util.HashSet<>();
        Map<String, String> failed = failedAtStart(units, agents, degraded);
        if (!failed.isEmpty()) {
            units.keySet().removeAll(failed.keySet());
            LOG.info("AMD GPU driver for {}: not offering {} whose health is failed: {}", amountKey, failed.keySet(), failed.values());
        }
        if (units.size() < amount) {
            throw new DeviceDriverException(
                    "Asked for " + amount + " " + what + " (" + amountKey + ") but " + backend.describe() + " found "
                            + units.size() + (units.isEmpty() ? "" : ": " + units.keySet()) + " of the host's agents "
                            + agents + " (" + describeVisible() + ")"
                            + (backend.skipped().isEmpty() ? "" : "; " + backend.skipped())
                            + (failed.isEmpty() ? "" : "; not offered because their health is failed: " + failed)
                            + ". Lower " + amountKey + (units.isEmpty() ? "" : " to " + units.size()) + " or check the host"
                            + (unit == Unit.PARTITION ? " and its partition mode" : ""));
        }
        // a degraded unit works: handed out when nothing better is left, never before an ok one
        List<String> ids = new ArrayList<>();
        for (String id : units.keySet()) {
            if (!degraded.contains(id)) {
                ids.add(id);
            }
        }
        for (String id : units.keySet()) {
            if (degraded.contains(id)) {
                ids.add(id);
            }
        }
        List<String> chosen =
                coordinator == null ? ids.subList(0, (int) amount) : coordinator.allocate(ids, amount);
        DeviceMonitor m = monitor(chosen, units, agents);
        Set<GpuInfo> infos = new LinkedHashSet<>();
        for (String id : chosen) {
            infos.add(info(units.get(id), m == null ? LiveProperties.NONE : m.properties(id)));
        }
        // the line an operator looks for in the TaskManager's log
        LOG.info("AMD GPU driver ({}) for {}: handing out {} {}: {}", backend.describe(), amountKey, amount, what, chosen);
        return Collections.unmodifiableSet(infos);
    }

    /**
     * The agents, refused when one is listed twice: two entries with one agent index, or two agents
     * at the PCI address of a GPU that is not partitioned. Either would hand two tasks one device
     * through ROCR_VISIBLE_DEVICES (or merge two agents into one "GPU").
     */
    private List<AmdGpu> distinct(List<AmdGpu> agents) throws DeviceDriverException {
        Map<Integer, AmdGpu> byIndex = new HashMap<>();
        Map<String, AmdGpu> wholeByPci = new HashMap<>();
        for (AmdGpu g : agents) {
            AmdGpu sameIndex = byIndex.putIfAbsent(g.index, g);
            if (sameIndex != null) {
                throw new DeviceDriverException(
                        backend.describe() + " lists GPU agent index " + g.index + " twice (PCI " + sameIndex.pciAddress
                                + " and " + g.pciAddress + "); expected every agent once, or two tasks would get one"
                                + " device through " + ROCR + ". Check the tool's output on this host");
            }
            if (!g.partitioned()) {
                AmdGpu samePci = wholeByPci.putIfAbsent(g.pciAddress, g);
                if (samePci != null) {
                    throw new DeviceDriverException(
                            backend.describe() + " lists two GPU agents (" + samePci.index + " and " + g.index
                                    + ") at PCI address " + g.pciAddress + ", whose compute partition is "
                                    + (g.computePartition == null ? "unknown" : g.computePartition)
                                    + "; expected one agent per GPU that is not partitioned (a location_id or bus.bdf"
                                    + " listed twice?). Check the host's KFD topology");
                }
            }
        }
        return agents;
    }

    private String describeVisible() {
        List<String> set = new ArrayList<>();
        for (VisibleDevices v : visibleVariables) {
            if (v.restricts()) {
                set.add(v.describe());
            }
        }
        return set.isEmpty() ? "no visible-devices variable set" : String.join(", ", set);
    }

    /**
     * The agents the TaskManager's own variables allow. ROCR_VISIBLE_DEVICES selects for all of
     * ROCm; HIP then reads HIP_VISIBLE_DEVICES, else CUDA_VISIBLE_DEVICES, else GPU_DEVICE_ORDINAL
     * (which AMD's OpenCL reads too) and applies its indexes to ROCR's selection. So every one of
     * them is honoured, and those that are set must list the same entries ({@code 0,1} and {@code
     * 0, 1} are one list): two different lists name different GPUs depending on the tool and the
     * ROCm release (Ray refuses them for the same reason).
     */
    private List<AmdGpu> visible(List<AmdGpu> agents) throws DeviceDriverException {
        VisibleDevices first = null;
        for (VisibleDevices v : visibleVariables) {
            if (!v.restricts()) {
                continue;
            }
            if (first == null) {
                first = v;
            } else if (!first.sameEntries(v)) {
                throw new DeviceDriverException(
                        first.describe() + " and " + v.describe() + " disagree; expected one of them set, or all"
                                + " that are set to list the same GPUs (ROCm applies HIP's selection, read from "
                                + HIP + ", else " + CUDA + ", else " + ORDINAL + ", to ROCR's, so two different"
                                + " lists name different GPUs depending on the tool). Fix the TaskManager's"
                                + " environment");
            }
        }
        if (first == null) {
            return agents;
        }
        return first.apply(agents, g -> List.of(VisibleDevices.name(g.index, g.uuid().orElse(null))));
    }

    /** Units by coordination id: the PCI address of a GPU, {@code <pci>/<n>} for a partition. */
    private Map<String, List<AmdGpu>> units(List<AmdGpu> agents) {
        Map<String, List<AmdGpu>> units = new LinkedHashMap<>();
        for (AmdGpu g : agents) {
            if (unit == Unit.PARTITION) {
                if (partitionProfile != null && !partitionProfile.equalsIgnoreCase(String.valueOf(g.partitionProfile()))) {
                    continue;
                }
                units.put(g.partitioned() ? DeviceCoordinator.partId(g.pciAddress, Integer.toString(g.partitionIndex)) : g.pciAddress, List.of(g));
            } else {
                List<AmdGpu> same = units.get(g.pciAddress);
                if (same == null) {
                    same = new ArrayList<>();
                    units.put(g.pciAddress, same);
                }
                same.add(g);
            }
        }
        return units;
    }

    /** The agents' indexes, comma-separated, as ROCR_VISIBLE_DEVICES lists them. */
    private static String indexes(List<AmdGpu> agents) {
        StringBuilder out = new StringBuilder();
        for (AmdGpu a : agents) {
            out.append(out.length() == 0 ? "" : ",").append(a.index);
        }
        return out.toString();
    }

    private static GpuInfo info(List<AmdGpu> agents, LiveProperties live) {
        AmdGpu first = agents.get(0);
        boolean part = agents.size() == 1 && first.partitioned();
        GpuInfo.Builder b =
                GpuInfo.builder("amd", first.index)
                        .live(live)
                        .name(first.productName)
                        .pciAddress(first.pciAddress)
                        .architecture(first.gfxTarget)
                        .renderNode(agents.size() == 1 ? first.renderNode() : null)
                        .visibleDevices(ROCR, indexes(agents));
        if (part) {
            b.partition(first.partitionProfile())
                    .uuid(first.uuid().map(u -> u + "/" + first.partitionIndex).orElse(null));
            if (first.vramBytes >= 0) {
                b.memoryBytes(first.vramBytes);
            }
        } else {
            b.uuid(first.uuid().orElse(null));
            // A partition reports its memory partition's share (NPS4: a quarter), so a whole GPU has
            // its share times the number of memory partitions.
            long vram = first.vramBytes < 0 ? -1 : first.vramBytes * memoryPartitions(first);
            if (vram > 0) {
                b.memoryBytes(vram);
            }
        }
        return b.build();
    }

    private static long memoryPartitions(AmdGpu g) {
        String m = g.memoryPartition;
        if (m == null || m.length() != 4 || !m.startsWith("NPS") || m.charAt(3) < '1' || m.charAt(3) > '8') {
            return 1;
        }
        return g.memoryPartition.charAt(3) - '0';
    }

    @Override
    public Map<String, Long> kubernetesResources(long amount) {
        return Map.of(kubernetesName, amount);
    }

    @Override
    public Map<String, String> kubernetesNodeSelector() {
        return nodeSelector;
    }

    @Override
    public Map<String, Long> yarnResources(long amount) {
        return Map.of(yarnName, amount);
    }

    @Override
    public String draDeviceClass() {
        return dra.selection.deviceClass();
    }

    @Override
    public String draAttributeDomain() {
        return AmdGpuDriverFactory.DRA_CLASS;
    }

    /**
     * {@inheritDoc}
     *
     * <p>AMD's DRA driver types whole GPUs {@code amdgpu} and partitions {@code amdgpu-partition}
     * and names a partition's profile by compute and memory mode ({@code cpx_nps4}); a profile
     * given by its compute mode alone cannot be matched, and says which key to complete.
     */
    @Override
    public Map<String, String> draAttributes() {
        Map<String, String> attributes = dra.selection.attributes();
        if (unit == Unit.PARTITION) {
            attributes.put("type", "amdgpu-partition");
            if (partitionProfile != null) {
                if (!partitionProfile.contains("/")) {
                    throw new IllegalStateException(dra.profileKey + ": is '" + partitionProfile
                            + "', a compute mode without a memory mode; AMD's DRA driver names partitions by"
                            + " both (partitionProfile " + partitionProfile.toLowerCase(Locale.ROOT) + "_nps4),"
                            + " so set it to " + partitionProfile + "/NPS1, " + partitionProfile + "/NPS4, ...");
                }
                attributes.put("partitionProfile", partitionProfile.toLowerCase(Locale.ROOT).replace('/', '_'));
            }
        } else {
            attributes.put("type", "amdgpu");
        }
        // callers (the CLI, several threads) must not change what the next one reads
        return Collections.unmodifiableMap(attributes);
    }

    @Override
    public Map<String, String> draMinimumCapacity() {
        return dra.selection.minimumCapacity();
    }

    @Override
    public boolean draPublishesPcieRoot() {
        return true;
    }
}
