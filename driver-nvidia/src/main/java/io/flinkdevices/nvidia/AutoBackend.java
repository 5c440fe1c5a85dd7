package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.info.GpuInfo;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * Tries backends in a fixed order and uses the first that works; says why each earlier one did
 * not (a WARN per failed backend, and all reasons in the exception when none works).
 */
final class AutoBackend implements Backend {

    private static final Logger LOG = LoggerFactory.getLogger(AutoBackend.class);

    private final List<Backend> order;
    private volatile Backend chosen;

    AutoBackend(List<Backend> order) {
        this.order = List.copyOf(order);
    }

    @Override
    public String describe() {
        Backend c = chosen;
        StringBuilder sb = new StringBuilder("auto (");
        for (int i = 0; i < order.size(); i++) {
            sb.append(i == 0 ? "" : ", then ").append(order.get(i).describe());
        }
        sb.append(')');
        return c == null ? sb.toString() : c.describe() + " chosen by " + sb;
    }

    /** The backend that found the devices last; null before. */
    Backend chosen() {
        return chosen;
    }

    @Override
    public String coordinationId(GpuInfo d) {
        Backend c = chosen;
        return c == null ? Backend.super.coordinationId(d) : c.coordinationId(d);
    }

    @Override
    public List<GpuInfo> devices(long amount) throws DeviceDriverException {
        List<String> reasons = new ArrayList<>();
        for (Backend backend : order) {
            try {
                List<GpuInfo> devices = backend.devices(amount);
                chosen = backend;
                if (!reasons.isEmpty()) {
                    LOG.info("NVIDIA GPUs found with {} after: {}", backend.describe(), reasons);
                }
                return devices;
            } catch (DeviceDriverException e) {
                LOG.warn("backend {} did not work: {}", backend.describe(), e.getMessage());
                reasons.add(backend.describe() + ": " + e.getMessage());
            }
        }
        throw new DeviceDriverException(
                "No NVIDIA GPU backend works (backend: auto tried them in this order): "
                        + String.join("; ", reasons));
    }

}
