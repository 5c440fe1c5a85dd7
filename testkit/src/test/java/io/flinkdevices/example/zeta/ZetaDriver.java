package io.flinkdevices.example.zeta;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.deploy.YarnResourceDecorator;
import io.flinkdevices.sdk.host.VisibleDevices;
import io.flinkdevices.sdk.info.AcceleratorInfo;
import io.flinkdevices.sdk.info.DeviceAttribute;

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
 * Hands a TaskManager {@code amount} of the healthy Zeta NPUs its backend lists and {@value
 * #VISIBLE_DEVICES} lets it use, through the coordination file when coordination is on; logs at
 * INFO which it handed out.
 */
final class ZetaDriver implements ExternalResourceDriver, KubernetesResourceDecorator, YarnResourceDecorator, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ZetaDriver.class);

    static final String KIND = "npu";
    static final String VISIBLE_DEVICES = "ZETA_VISIBLE_DEVICES";
    static final String RESOURCE = "zeta.example.com/npu";
    /** An extra field; job code reads it with {@code AcceleratorInfo.from(info, KIND, NUMA_NODE)}. */
    static final DeviceAttribute<Long> NUMA_NODE = DeviceAttribute.number("numa.node", 0, 1023);

    private final ZetaBackend backend;
    private final VisibleDevices visible;
    private final DeviceCoordinator coordinator;
    private final String amountKey;

    ZetaDriver(ZetaBackend backend, VisibleDevices visible, DeviceCoordinator coordinator, String amountKey) {
        this.backend = backend;
        this.visible = visible;
        this.coordinator = coordinator;
        this.amountKey = amountKey;
    }

    @Override
    public Set<AcceleratorInfo> retrieveResourceInfo(long amount) throws DeviceDriverException {
        if (amount < 1) {
            throw new DeviceDriverException(amountKey + " must be at least 1 but is " + amount);
        }
        List<AcceleratorInfo> listed = new ArrayList<>();
        Set<AcceleratorInfo> failed = new HashSet<>();
        for (ZetaBackend.Listed l : backend.devices()) {
            listed.add(l.info());
            if (l.failed()) {
                failed.add(l.info());
            }
        }
        List<AcceleratorInfo> usable = new ArrayList<>();
        for (AcceleratorInfo d : visible.apply(listed, i -> List.of(VisibleDevices.name(i.getIndex(), i.getUuid().orElseThrow())))) {
            if (!failed.contains(d)) {
                usable.add(d);
            } else {
                LOG.warn("Zeta driver: not handing out failed NPU {}", d);
            }
        }
        if (usable.size() < amount) {
            throw new DeviceDriverException("Asked for " + amount + " (" + amountKey + ") but " + backend.describe()
                    + " lists " + usable.size() + " healthy NPUs this TaskManager may use (" + visible.describe() + ")");
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
        LOG.info("Zeta driver ({}) for {}: handing out {}", backend.describe(), amountKey, chosen);
        return Collections.unmodifiableSet(new LinkedHashSet<>(chosen));
    }

    /** Releases the NPUs this driver took (sdk-api's driver lifecycle); safe to call twice. */
    @Override
    public void close() throws DeviceDriverException {
        if (coordinator != null) {
            coordinator.releaseAllocated();
        }
    }

    @Override
    public Map<String, Long> kubernetesResources(long amount) {
        return Map.of(RESOURCE, amount);
    }

    @Override
    public Map<String, Long> yarnResources(long amount) {
        return Map.of(RESOURCE, amount);
    }
}
