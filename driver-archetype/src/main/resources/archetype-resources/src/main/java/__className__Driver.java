package ${package};

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.health.DeviceMonitor;
import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.HealthState;
import io.flinkdevices.sdk.health.MonitorSettings;
import io.flinkdevices.sdk.host.VisibleDevices;
import io.flinkdevices.sdk.info.AcceleratorInfo;
import io.flinkdevices.sdk.info.DeviceAttribute;
import io.flinkdevices.sdk.info.LiveProperties;
import io.flinkdevices.sdk.process.ExternalCommand;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Hands a TaskManager {@code amount} of the healthy devices {@code ${deviceName}-smi --list} prints
 * (one {@code <index>,<uuid>,<name>,<memory MiB|N/A>,<NUMA node|N/A>,<millidegrees C|N/A>,<ok|degraded|failed>}
 * line each), the
 * {@code ok} ones first, then the {@code degraded} ones (usable, never quarantined), never a
 * {@code failed} one, of those
 * {@value #VISIBLE_DEVICES} lets it use, through the coordination file when coordination is on, and
 * logs at INFO which it handed out (through SLF4J, which a plugin gets from Flink). While jobs run,
 * one {@link DeviceMonitor} runs the same listing every {@code monitor.interval} and its tasks read
 * the devices' {@code health} and {@code metric.*} keys from their infos.
 */
final class ${className}Driver implements ExternalResourceDriver, KubernetesResourceDecorator, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(${className}Driver.class);

    static final String KIND = "${deviceName}";
    static final String VISIBLE_DEVICES = "${deviceName.toUpperCase()}_VISIBLE_DEVICES";
    /** The extended resource the vendor's Kubernetes device plugin advertises. */
    static final String KUBERNETES_RESOURCE = "example.com/${deviceName}";
    /** An extra field of the generic info; job code reads it with {@code AcceleratorInfo.from(info, KIND, NUMA_NODE)}. */
    static final DeviceAttribute<Long> NUMA_NODE = DeviceAttribute.number("numa.node", 0, 1023);
    private static final Pattern LINE = Pattern.compile("([0-9]{1,6}),([^,\\s]+),([^,]+),([0-9]{1,12}|N/A),([0-9]{1,3}|N/A),(-?[0-9]{1,7}|N/A),(ok|degraded|failed)");

    private final ExternalCommand list;
    private final VisibleDevices visible;
    private final DeviceCoordinator coordinator;
    private final String amountKey;
    private final MonitorSettings monitorSettings;
    /** The monitor of the devices last handed out; null before or when monitoring is off. */
    private DeviceMonitor monitor;

    ${className}Driver(ExternalCommand list, VisibleDevices visible, DeviceCoordinator coordinator, String amountKey,
            MonitorSettings monitorSettings) {
        this.list = list;
        this.visible = visible;
        this.coordinator = coordinator;
        this.amountKey = amountKey;
        this.monitorSettings = monitorSettings;
    }

    @Override
    public Set<AcceleratorInfo> retrieveResourceInfo(long amount) throws DeviceDriverException {
        if (amount < 1) {
            throw new DeviceDriverException(amountKey + " must be at least 1 but is " + amount);
        }
        List<Map.Entry<AcceleratorInfo, DeviceSample>> rows = list();
        List<AcceleratorInfo> listed = new ArrayList<>();
        Map<AcceleratorInfo, HealthState> health = new HashMap<>();
        rows.forEach(r -> listed.add(r.getKey()));
        rows.forEach(r -> health.put(r.getKey(), r.getValue().health()));
        List<AcceleratorInfo> usable = new ArrayList<>();
        List<AcceleratorInfo> degraded = new ArrayList<>();
        for (AcceleratorInfo d : visible.apply(listed, i -> List.of(VisibleDevices.name(i.getIndex(), i.getUuid().orElseThrow())))) {
            if (health.get(d) == HealthState.OK) {
                usable.add(d);
            } else if (health.get(d) == HealthState.DEGRADED) {
                degraded.add(d);
            } else {
                LOG.warn("${className} driver: not handing out failed device {}", d);
            }
        }
        usable.addAll(degraded); // usable, but after every ok device
        if (usable.size() < amount) {
            throw new DeviceDriverException("Asked for " + amount + " (" + amountKey + ") but " + describe()
                    + " lists " + usable.size() + " healthy ones this TaskManager may use (" + visible.describe() + ")");
        }
        List<AcceleratorInfo> chosen = usable.subList(0, (int) amount);
        if (coordinator != null) {
            List<String> ids = new ArrayList<>();
            usable.forEach(d -> ids.add(d.getUuid().orElseThrow()));
            List<String> taken = coordinator.allocate(ids, amount);
            chosen = new ArrayList<>();
            for (AcceleratorInfo d : usable) {
                if (taken.contains(d.getUuid().orElseThrow())) {
                    chosen.add(d);
                }
            }
        }
        chosen = monitored(chosen);
        LOG.info("${className} driver ({}) for {}: handing out {}", describe(), amountKey, chosen);
        return Collections.unmodifiableSet(new LinkedHashSet<>(chosen));
    }

    /**
     * One monitor per driver instance, of the devices it hands out last (Flink asks once per
     * TaskManager): {@code chosen} with its live keys. With coordination on, a device the monitor
     * sees failed is quarantined for every TaskManager of the host.
     */
    private synchronized List<AcceleratorInfo> monitored(List<AcceleratorInfo> chosen) {
        if (monitor != null) {
            monitor.stop();
        }
        Map<String, AcceleratorInfo> byId = new LinkedHashMap<>();
        chosen.forEach(d -> byId.put(d.getUuid().orElseThrow(), d));
        monitor = DeviceMonitor.create(monitorSettings, List.copyOf(byId.keySet()), this::sample);
        if (coordinator != null) {
            monitor.addListener(coordinator.quarantine().listener(monitorSettings));
        }
        monitor.start(); // does nothing with monitor.interval 0: no live key then, not a stale one
        List<AcceleratorInfo> live = new ArrayList<>();
        byId.forEach((id, d) -> live.add(withLive(d, monitor.properties(id))));
        return live;
    }

    /**
     * Ends what {@link #retrieveResourceInfo} started (sdk-api's driver lifecycle): stops the
     * monitor, so no tool runs after it returns, and releases the devices this driver took. Flink
     * never calls it (a TaskManager's monitor ends with its infos, its records with its process);
     * tools and tests that hold a driver do. Safe to call twice.
     */
    @Override
    public synchronized void close() throws DeviceDriverException {
        if (monitor != null) {
            monitor.stop();
        }
        if (coordinator != null) {
            coordinator.releaseAllocated();
        }
    }

    /**
     * The monitor's sampler: one listing per interval for all devices, never one per device or read.
     * A device the tool stops listing reads failed ("not seen"); {@link #list()} adds a {@code
     * .metric(name, value)} for every number the tool prints per device, in the metric's unit.
     */
    private Map<String, DeviceSample> sample(Collection<String> ids) throws DeviceDriverException {
        Map<String, DeviceSample> samples = new HashMap<>();
        for (Map.Entry<AcceleratorInfo, DeviceSample> r : list()) {
            samples.put(r.getKey().getUuid().orElseThrow(), r.getValue());
        }
        return samples;
    }

    /** {@code d} with the monitor's live keys ({@code health}, {@code metric.*}). */
    private static AcceleratorInfo withLive(AcceleratorInfo d, LiveProperties live) {
        AcceleratorInfo.Builder b = AcceleratorInfo.builder(KIND, d.getVendor(), d.getIndex()).live(live)
                .uuid(d.getUuid().orElseThrow()).name(d.getName().orElseThrow())
                .visibleDevices(VISIBLE_DEVICES, d.getVisibleDevicesValue().orElseThrow());
        d.getMemoryBytes().ifPresent(b::memoryBytes);
        d.get(NUMA_NODE).ifPresent(n -> b.set(NUMA_NODE, n));
        return b.build();
    }

    /**
     * Every device the tool lists, in its order, with the health and metrics it says. Neither is an
     * extra field of the info: an info's {@code health} and {@code metric.*} keys are the monitor's
     * (the builder refuses them).
     */
    private List<Map.Entry<AcceleratorInfo, DeviceSample>> list() throws DeviceDriverException {
        ExternalCommand.Result result = list.run();
        if (result.exitCode() != 0) {
            throw new DeviceDriverException(describe() + " exited with code " + result.exitCode() + ": "
                    + result.stderrTail().strip());
        }
        if (result.stdoutTruncated()) {
            throw new DeviceDriverException(describe() + " printed more than " + ExternalCommand.STDOUT_LIMIT_BYTES
                    + " bytes: the listing is cut off");
        }
        List<Map.Entry<AcceleratorInfo, DeviceSample>> devices = new ArrayList<>();
        Set<String> indexes = new HashSet<>();
        for (String line : result.stdout().split("\n")) {
            Matcher m = LINE.matcher(line.strip());
            if (line.isBlank()) {
                continue;
            } else if (!m.matches()) {
                throw new DeviceDriverException(describe() + " printed '" + line.strip()
                        + "'; expected '<index>,<uuid>,<name>,<memory MiB|N/A>,<NUMA node|N/A>,<millidegrees C|N/A>,<ok|degraded|failed>'");
            } else if (!indexes.add(m.group(1))) {
                throw new DeviceDriverException(describe() + " lists device " + m.group(1) + " twice");
            }
            AcceleratorInfo.Builder device = AcceleratorInfo.builder(KIND, "example", Integer.parseInt(m.group(1)))
                    .uuid(m.group(2))
                    .name(m.group(3))
                    .visibleDevices(VISIBLE_DEVICES, m.group(1));
            if (!m.group(4).equals("N/A")) {
                device.memoryBytes(Long.parseLong(m.group(4)) * 1024 * 1024);
            }
            if (!m.group(5).equals("N/A")) {
                device.set(NUMA_NODE, Long.parseLong(m.group(5)));
            }
            DeviceSample.Builder sample = DeviceSample.builder().health(HealthState.parse(m.group(7)), describe() + " reports device " + m.group(1) + " " + m.group(7));
            // a metric's name says its unit (temperature_celsius and utilization_percent are what the kit
            // compares with the fake's truth by default); the tool prints millidegrees
            devices.add(Map.entry(device.build(), (m.group(6).equals("N/A") ? sample : sample.metric("temperature_celsius", Long.parseLong(m.group(6)) / 1000.0)).build()));
        }
        return devices;
    }

    private String describe() {
        return "${deviceName}-smi --list (" + list.command().get(0) + ")";
    }

    @Override
    public Map<String, Long> kubernetesResources(long amount) {
        return Map.of(KUBERNETES_RESOURCE, amount);
    }

    // What the TaskManager container needs beyond the devices: flink-devices render puts these
    // into the pod template and prints the reason; change or delete them for your device.
    @Override
    public List<String> kubernetesCapabilities() {
        return List.of("SYS_RAWIO");
    }

    @Override
    public Map<String, String> kubernetesEnvironment() {
        return Map.of("${deviceName.toUpperCase()}_RUNTIME_LOG", "warn");
    }

    @Override
    public Map<String, String> kubernetesHostPaths() {
        return Map.of("/dev/${deviceName}", "CharDevice");
    }

    @Override
    public List<String> kubernetesNeedsReasons() {
        return List.of("the ${deviceName} runtime opens /dev/${deviceName} itself, which needs SYS_RAWIO");
    }
}
