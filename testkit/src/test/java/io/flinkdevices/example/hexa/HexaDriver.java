package io.flinkdevices.example.hexa;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.deploy.DevicePaths;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.health.DeviceMonitor;
import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.HealthState;
import io.flinkdevices.sdk.health.MonitorSettings;
import io.flinkdevices.sdk.host.VisibleDevices;
import io.flinkdevices.sdk.info.AcceleratorInfo;
import io.flinkdevices.sdk.info.DeviceAttribute;
import io.flinkdevices.sdk.process.ExternalCommand;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Hands a TaskManager {@code amount} of the Hexa cards {@code hexa-smi --json} lists and {@value
 * #VISIBLE_DEVICES} lets it use: the {@code ok} ones first, then the {@code degraded} ones, never a
 * {@code failed} one; through the coordination file when coordination is on. One {@link
 * DeviceMonitor} runs the same listing every {@code monitor.interval} for the cards' {@code health},
 * {@code metric.temperature} (°C) and {@code metric.utilization} (%).
 */
final class HexaDriver implements ExternalResourceDriver, KubernetesResourceDecorator, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(HexaDriver.class);

    static final String KIND = "hexa";
    static final String VISIBLE_DEVICES = "HEXA_VISIBLE_DEVICES";
    static final String KUBERNETES_RESOURCE = "hexa.example.com/card";
    /** Job code reads it with {@code AcceleratorInfo.from(info, KIND, NUMA_NODE)}; absent when the tool prints none. */
    static final DeviceAttribute<Long> NUMA_NODE = DeviceAttribute.number("numa.node", 0, 1023);

    private final ExternalCommand list;
    private final String tool;
    private final VisibleDevices visible;
    private final DeviceCoordinator coordinator;
    private final String amountKey;
    private final MonitorSettings monitorSettings;
    private DeviceMonitor monitor;

    HexaDriver(ExternalCommand list, String toolKey, VisibleDevices visible, DeviceCoordinator coordinator, String amountKey,
            MonitorSettings monitorSettings) {
        this.list = list;
        this.tool = "hexa-smi --json (" + list.command().get(0) + ", " + toolKey + ")";
        this.visible = visible;
        this.coordinator = coordinator;
        this.amountKey = amountKey;
        this.monitorSettings = monitorSettings;
    }

    @Override
    public synchronized Set<AcceleratorInfo> retrieveResourceInfo(long amount) throws DeviceDriverException {
        if (amount < 1) {
            throw new DeviceDriverException(amountKey + " must be at least 1 but is " + amount);
        }
        List<HexaCard> usable = new ArrayList<>();
        for (HexaCard c : visible.apply(cards(), c -> List.of(VisibleDevices.name(c.index(), c.uuid())))) {
            if (c.health() == HealthState.FAILED) {
                LOG.warn("Hexa driver: not handing out failed card {} ({})", c.index(), c.uuid());
            } else {
                usable.add(c);
            }
        }
        usable.sort(Comparator.comparing(c -> c.health() == HealthState.DEGRADED)); // degraded after every ok card
        if (usable.size() < amount) {
            throw new DeviceDriverException("Asked for " + amount + " (" + amountKey + ") but " + tool + " lists "
                    + usable.size() + " usable cards this TaskManager may use (" + visible.describe() + ")");
        }
        List<HexaCard> chosen = new ArrayList<>(usable.subList(0, (int) amount));
        if (coordinator != null) {
            List<String> taken = coordinator.allocate(usable.stream().map(HexaCard::uuid).toList(), amount);
            chosen.clear();
            usable.stream().filter(c -> taken.contains(c.uuid())).forEach(chosen::add);
        }
        if (monitor != null) {
            monitor.stop();
        }
        monitor = DeviceMonitor.create(monitorSettings, chosen.stream().map(HexaCard::uuid).toList(), this::sample);
        if (coordinator != null) {
            monitor.addListener(coordinator.quarantine().listener(monitorSettings));
        }
        monitor.start(); // does nothing with monitor.interval 0: no live key then
        Set<AcceleratorInfo> infos = new LinkedHashSet<>();
        chosen.forEach(c -> infos.add(c.info(monitor.properties(c.uuid()))));
        LOG.info("Hexa driver ({}) for {}: handing out {}", tool, amountKey, infos);
        return Collections.unmodifiableSet(infos);
    }

    /** Stops the monitor (no tool runs after it returns) and releases the cards this driver took; safe to call twice. */
    @Override
    public synchronized void close() throws DeviceDriverException {
        if (monitor != null) {
            monitor.stop();
        }
        if (coordinator != null) {
            coordinator.releaseAllocated();
        }
    }

    /** One listing per interval for every card, keyed by UUID: a card the tool no longer lists reads failed. */
    private Map<String, DeviceSample> sample(Collection<String> ids) throws DeviceDriverException {
        Map<String, DeviceSample> samples = new HashMap<>();
        cards().forEach(c -> samples.put(c.uuid(), c.sample(tool)));
        return samples;
    }

    private List<HexaCard> cards() throws DeviceDriverException {
        ExternalCommand.Result result = list.run();
        if (result.exitCode() != 0) {
            throw new DeviceDriverException(tool + " exited with code " + result.exitCode() + ": " + result.stderrTail().strip());
        } else if (result.stdoutTruncated()) {
            throw new DeviceDriverException(tool + " printed more than " + ExternalCommand.STDOUT_LIMIT_BYTES + " bytes: the listing is cut off");
        }
        return HexaCard.parse(tool, result.stdout());
    }

    @Override
    public Map<String, Long> kubernetesResources(long amount) {
        return Map.of(KUBERNETES_RESOURCE, amount);
    }

    /** Without a device plugin that mounts the allocated cards, the TaskManager may be handed any of the first {@code amount}. */
    @Override
    public Map<String, String> kubernetesDevicePaths(long amount) {
        return DevicePaths.numbered("/dev/hexa{index}", "CharDevice", amount);
    }
}
