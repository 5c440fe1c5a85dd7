package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.deploy.DraSelection;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.deploy.YarnResourceDecorator;
import io.flinkdevices.sdk.health.DeviceMonitor;
import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.DeviceSampler;
import io.flinkdevices.sdk.health.HealthState;
import io.flinkdevices.sdk.health.MonitorSettings;
import io.flinkdevices.sdk.info.GpuInfo;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Hands a TaskManager {@code amount} NVIDIA GPUs (or MIG devices) found by its backend, in the
 * backend's order (with monitoring on and a choice to make, degraded ones after every ok one),
 * through the device coordinator when coordination is on.
 */
final class NvidiaGpuDriver
        implements ExternalResourceDriver, KubernetesResourceDecorator, YarnResourceDecorator, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(NvidiaGpuDriver.class);

    static final String KUBERNETES_GPU = "nvidia.com/gpu";
    static final String YARN_GPU = "yarn.io/gpu";

    private final Backend backend;
    private final DeviceCoordinator coordinator;
    private final String amountKey;
    private final String migProfile;
    private final DraSelection dra;
    private MonitorSettings monitorSettings;
    private XidPolicy xids = XidPolicy.defaults();
    /** The monitor of the units last handed out; null before or when monitoring is off. */
    private DeviceMonitor monitor;
    private NvmlSampler nvmlSampler;

    /**
     * @param coordinator null when coordination is off
     * @param migProfile null unless MIG devices of this profile are the units
     * @param dra what a DRA claim asks for ({@code gpu.nvidia.com} or {@code mig.nvidia.com} unless
     *     set)
     */
    NvidiaGpuDriver(
            Backend backend,
            DeviceCoordinator coordinator,
            String amountKey,
            String migProfile,
            DraSelection dra) {
        this.dra = dra;
        this.backend = backend;
        this.coordinator = coordinator;
        this.amountKey = amountKey;
        this.migProfile = migProfile;
    }

    Backend backend() {
        return backend;
    }

    /** Monitors the handed-out units with {@code settings} (off when its interval is 0). */
    void monitorWith(MonitorSettings settings, XidPolicy xids) {
        this.monitorSettings = settings;
        this.xids = xids;
    }

    /** Stops the monitor (tests and tools; a TaskManager lets it end on its own). */
    synchronized void stopMonitor() {
        if (monitor != null) {
            monitor.stop();
        }
    }

    /**
     * Ends what {@link #retrieveResourceInfo} started (sdk-api's driver lifecycle): the monitor
     * (and its NVML event set) and the coordination records of the units this driver took. Flink
     * never calls it; the CLI and tests do. Safe to call twice.
     */
    @Override
    public synchronized void close() throws DeviceDriverException {
        stopMonitor();
        if (nvmlSampler != null) {
            nvmlSampler.close();
            nvmlSampler = null;
        }
        if (coordinator != null) {
            coordinator.releaseAllocated();
        }
    }

    /** The running monitor, for tests; null when none. */
    synchronized DeviceMonitor monitor() {
        return monitor;
    }

    /** One monitor per driver instance, of the units it handed out last, with their live keys. */
    private synchronized List<GpuInfo> monitored(List<GpuInfo> chosen) throws DeviceDriverException {
        if (monitor != null) {
            monitor.stop();
            monitor = null;
        }
        if (nvmlSampler != null) {
            nvmlSampler.close();
            nvmlSampler = null;
        }
        if (monitorSettings == null || !monitorSettings.enabled()) {
            return chosen;
        }
        DeviceSampler sampler = NvidiaMonitors.sampler(backend, chosen, xids);
        if (sampler == null) {
            LOG.warn("NVIDIA GPU monitor for {}: off, {} cannot monitor (monitoring works with {})", amountKey,
                    NvidiaMonitors.effective(backend).describe(), NvidiaMonitors.CAN_MONITOR);
            return chosen;
        }
        if (sampler instanceof NvmlSampler) {
            nvmlSampler = (NvmlSampler) sampler;
        }
        List<String> ids = new ArrayList<>();
        for (GpuInfo d : chosen) {
            ids.add(backend.coordinationId(d));
        }
        monitor = DeviceMonitor.create(monitorSettings, ids, sampler);
        if (coordinator != null) {
            // a failed GPU or MIG unit leaves service for every TaskManager of the host, whatever the action
            monitor.addListener(coordinator.quarantine().listener(monitorSettings));
        }
        monitor.start();
        LOG.info("NVIDIA GPU monitor for {}: {} sampled through {} {}", amountKey, ids,
                sampler instanceof NvmlSampler ? "NVML" : "one nvidia-smi query per interval", monitorSettings);
        List<GpuInfo> out = new ArrayList<>();
        for (int i = 0; i < chosen.size(); i++) {
            out.add(NvidiaMonitors.withLive(chosen.get(i), monitor.properties(ids.get(i))));
        }
        return out;
    }

    @Override
    public Set<GpuInfo> retrieveResourceInfo(long amount) throws DeviceDriverException {
        String unit = migProfile == null ? "NVIDIA GPUs" : "MIG devices of profile " + migProfile;
        if (amount <= 0) {
            throw new DeviceDriverException(
                    amountKey + ": the amount of " + unit + " must be at least 1 but is " + amount);
        }
        if (coordinator != null) {
            // the allocation's kernel wait (see warmUp) runs beside the discovery's spawn
            coordinator.warmUp();
        }
        List<GpuInfo> devices = backend.devices(amount);
        if (devices.size() < amount) {
            throw new DeviceDriverException(
                    "Asked for " + amount + " " + unit + " (" + amountKey + ") but "
                            + backend.describe() + " found " + devices.size()
                            + (devices.isEmpty() ? "" : ": " + describe(devices))
                            + ". Lower " + amountKey + " or check the host and its "
                            + VisibleDevices.ENV + ".");
        }
        if (devices.size() > amount) {
            devices = okFirst(devices);
        }
        List<GpuInfo> chosen;
        if (coordinator == null) {
            chosen = devices.subList(0, (int) amount);
        } else {
            Map<String, GpuInfo> byId = new LinkedHashMap<>();
            for (GpuInfo d : devices) {
                byId.put(backend.coordinationId(d), d);
            }
            chosen = new ArrayList<>();
            List<String> taken;
            try {
                taken = coordinator.allocate(new ArrayList<>(byId.keySet()), amount);
            } catch (DeviceDriverException e) {
                String hint =
                        backend instanceof ScriptBackend
                                ? ((ScriptBackend) backend).coordinationHint(byId.size(), amount)
                                : "";
                if (hint.isEmpty()) {
                    throw e;
                }
                throw new DeviceDriverException(e.getMessage() + hint, e);
            }
            for (String id : taken) {
                chosen.add(byId.get(id));
            }
        }
        chosen = monitored(chosen);
        // the line an operator looks for in the TaskManager's log
        LOG.info(
                "NVIDIA GPU driver ({}{}) for {}: handing out {} of {} found: {}",
                backend.describe(),
                coordinator == null ? "" : ", coordinated through " + coordinator.file(),
                amountKey,
                chosen.size(),
                devices.size(),
                describe(chosen));
        return Collections.unmodifiableSet(new LinkedHashSet<>(chosen));
    }

    /**
     * {@code devices} with the degraded ones (clocks held down by the hardware) after every other
     * one, and failed ones last: a degraded GPU works, so it is handed out when nothing better is
     * left. Judged by the listing itself where it read the throttle reasons (nvidia-smi: no second
     * run), else by one sample of the monitor's sampler (NVML: no process). Unchanged when
     * monitoring is off or the sample fails (the order then is the backend's).
     */
    private List<GpuInfo> okFirst(List<GpuInfo> devices) throws DeviceDriverException {
        if (monitorSettings == null || !monitorSettings.enabled()) {
            return devices;
        }
        List<String> ids = new ArrayList<>();
        for (GpuInfo d : devices) {
            ids.add(backend.coordinationId(d));
        }
        Backend found = NvidiaMonitors.effective(backend);
        Map<String, DeviceSample> listed = found instanceof NvidiaSmiBackend ? ((NvidiaSmiBackend) found).listedHealth(ids) : null;
        return listed != null ? ordered(devices, ids, listed) : sampled(devices, ids);
    }

    private List<GpuInfo> sampled(List<GpuInfo> devices, List<String> ids) throws DeviceDriverException {
        DeviceSampler sampler = NvidiaMonitors.sampler(backend, devices, xids);
        if (sampler == null) {
            return devices;
        }
        Map<String, DeviceSample> samples;
        try {
            samples = sampler.sample(ids);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            LOG.info("NVIDIA GPU driver for {}: health before hand-out unknown, the backend's order kept: {}", amountKey, e.getMessage());
            return devices;
        } finally {
            if (sampler instanceof NvmlSampler) {
                ((NvmlSampler) sampler).close();
            }
        }
        return ordered(devices, ids, samples);
    }

    private List<GpuInfo> ordered(List<GpuInfo> devices, List<String> ids, Map<String, DeviceSample> samples) {
        List<GpuInfo> ordered = new ArrayList<>();
        for (HealthState state : HealthState.values()) {
            for (int i = 0; i < devices.size(); i++) {
                DeviceSample sample = samples.get(ids.get(i));
                HealthState h = sample == null ? HealthState.OK : sample.health();
                if (h == state) {
                    ordered.add(devices.get(i));
                    if (h != HealthState.OK) {
                        LOG.info("NVIDIA GPU driver for {}: {} offered last, its health is {}: {}", amountKey, ids.get(i),
                                h.value(), sample.reason());
                    }
                }
            }
        }
        return ordered;
    }

    private static List<String> describe(List<GpuInfo> devices) {
        List<String> out = new ArrayList<>();
        for (GpuInfo d : devices) {
            out.add("GPU " + d.getIndex() + d.getUuid().map(u -> " " + u).orElse(""));
        }
        return out;
    }

    @Override
    public Map<String, Long> kubernetesResources(long amount) {
        return Map.of(migProfile == null ? KUBERNETES_GPU : "nvidia.com/mig-" + migProfile, amount);
    }

    @Override
    public Map<String, Long> yarnResources(long amount) {
        return Map.of(YARN_GPU, amount);
    }

    /** The attribute domain of NVIDIA's DRA driver, for GPUs and MIG devices alike. */
    static final String DRA_DOMAIN = "gpu.nvidia.com";

    @Override
    public String draDeviceClass() {
        return dra.deviceClass();
    }

    @Override
    public String draAttributeDomain() {
        return DRA_DOMAIN;
    }

    @Override
    public Map<String, String> draAttributes() {
        Map<String, String> attributes = dra.attributes();
        if (migProfile != null) {
            // MIG devices publish their profile as "profile" (for example 1g.10gb)
            attributes.put("profile", migProfile);
        }
        // callers (the CLI, several threads) must not change what the next one reads
        return Collections.unmodifiableMap(attributes);
    }

    @Override
    public Map<String, String> draMinimumCapacity() {
        return dra.minimumCapacity();
    }

    @Override
    public boolean draPublishesPcieRoot() {
        return true;
    }
}
