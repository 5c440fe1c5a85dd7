package io.flinkdevices.amd;

import io.flinkdevices.sdk.DeviceDriverException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * Tries sysfs, then amd-smi, then rocm-smi, and uses the first that finds a GPU; logs why each
 * earlier one did not work, and says all the reasons when none does.
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
        StringBuilder sb = new StringBuilder("auto (");
        for (int i = 0; i < order.size(); i++) {
            sb.append(i == 0 ? "" : ", then ").append(order.get(i).describe());
        }
        sb.append(')');
        Backend c = chosen;
        return c == null ? sb.toString() : c.describe() + " chosen by " + sb;
    }

    @Override
    public String skipped() {
        Backend c = chosen;
        return c == null ? "" : c.skipped();
    }

    @Override
    public List<AmdGpu> agents() throws DeviceDriverException {
        List<String> reasons = new ArrayList<>();
        for (Backend backend : order) {
            try {
                List<AmdGpu> agents = backend.agents();
                if (agents.isEmpty()) {
                    String skipped = backend.skipped();
                    reasons.add(backend.describe() + ": found no AMD GPU" + (skipped.isEmpty() ? "" : " (" + skipped + ")"));
                    continue;
                }
                chosen = backend;
                if (!reasons.isEmpty()) {
                    LOG.info("AMD GPUs found with {} after: {}", backend.describe(), reasons);
                }
                return agents;
            } catch (DeviceDriverException e) {
                LOG.info("AMD GPU backend {} did not work: {}", backend.describe(), e.getMessage());
                reasons.add(backend.describe() + ": " + e.getMessage());
            }
        }
        throw new DeviceDriverException(
                "No AMD GPU backend finds a GPU (backend: auto tried them in this order): " + String.join("; ", reasons));
    }
}
