package ${package};

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.host.VisibleDevices;
import io.flinkdevices.sdk.info.AcceleratorInfo;
import io.flinkdevices.sdk.process.ExternalCommand;

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
 * Hands a TaskManager {@code amount} of the devices {@code ${deviceName}-smi --list} prints (one
 * {@code <index>,<uuid>,<name>,<memory MiB>} line each) and {@value #VISIBLE_DEVICES} lets it use,
 * through the coordination file when coordination is on, and logs at INFO which it handed out
 * (through SLF4J, which a plugin gets from Flink).
 */
final class ${className}Driver implements ExternalResourceDriver, KubernetesResourceDecorator {

    private static final Logger LOG = LoggerFactory.getLogger(${className}Driver.class);

    static final String KIND = "${deviceName}";
    static final String VISIBLE_DEVICES = "${deviceName.toUpperCase()}_VISIBLE_DEVICES";
    /** The extended resource the vendor's Kubernetes device plugin advertises. */
    static final String KUBERNETES_RESOURCE = "example.com/${deviceName}";

    private final ExternalCommand list;
    private final VisibleDevices visible;
    private final DeviceCoordinator coordinator;
    private final String amountKey;

    ${className}Driver(ExternalCommand list, VisibleDevices visible, DeviceCoordinator coordinator, String amountKey) {
        this.list = list;
        this.visible = visible;
        this.coordinator = coordinator;
        this.amountKey = amountKey;
    }

    @Override
    public Set<AcceleratorInfo> retrieveResourceInfo(long amount) throws DeviceDriverException {
        if (amount < 1) {
            throw new DeviceDriverException(amountKey + " must be at least 1 but is " + amount);
        }
        List<AcceleratorInfo> usable =
                visible.apply(list(), d -> List.of(VisibleDevices.name(d.getIndex(), d.getUuid().orElseThrow())));
        if (usable.size() < amount) {
            throw new DeviceDriverException("Asked for " + amount + " (" + amountKey + ") but " + describe()
                    + " lists " + usable.size() + " this TaskManager may use (" + visible.describe() + ")");
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
        LOG.info("${className} driver ({}) for {}: handing out {}", describe(), amountKey, chosen);
        return Collections.unmodifiableSet(new LinkedHashSet<>(chosen));
    }

    /** Every device the tool lists, in its order. */
    private List<AcceleratorInfo> list() throws DeviceDriverException {
        ExternalCommand.Result result = list.run();
        if (result.exitCode() != 0) {
            throw new DeviceDriverException(describe() + " exited with code " + result.exitCode() + ": "
                    + result.stderrTail().strip());
        }
        List<AcceleratorInfo> devices = new ArrayList<>();
        Set<String> indexes = new HashSet<>();
        for (String line : result.stdout().split("\n")) {
            String[] f = line.strip().split(" *, *");
            if (line.isBlank()) {
                continue;
            } else if (f.length != 4 || !f[0].matches("[0-9]{1,6}") || !f[3].matches("[0-9]{1,12}")
                    || f[1].isEmpty() || f[2].isEmpty()) {
                throw new DeviceDriverException(describe() + " printed '" + line.strip()
                        + "'; expected '<index>,<uuid>,<name>,<memory MiB>'");
            } else if (!indexes.add(f[0])) {
                throw new DeviceDriverException(describe() + " lists device " + f[0] + " twice");
            }
            devices.add(AcceleratorInfo.builder(KIND, "example", Integer.parseInt(f[0]))
                    .uuid(f[1])
                    .name(f[2])
                    .memoryBytes(Long.parseLong(f[3]) * 1024 * 1024)
                    .visibleDevices(VISIBLE_DEVICES, f[0])
                    .build());
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
