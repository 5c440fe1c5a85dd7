package io.flinkdevices.rdma;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.DeviceSampler;
import io.flinkdevices.sdk.health.HealthState;
import io.flinkdevices.sdk.host.Sysfs;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Samples the handed-out ports from sysfs, no process: {@code ports/<n>/state} and {@code
 * phys_state} for health (anything but ACTIVE/LinkUp is {@code failed}; back to both is recovery;
 * a port or device folder that vanished is {@code failed}), and the counters of {@code
 * ports/<n>/counters/} as metrics.
 */
final class PortSampler implements DeviceSampler {

    /**
     * The counters sampled, as the kernel names them (the InfiniBand PortCounters attributes):
     * {@code port_rcv_data} and {@code port_xmit_data} count 4-octet words, the others events.
     */
    static final List<String> COUNTERS = List.of("port_rcv_data", "port_xmit_data", "symbol_error", "link_downed");
    /** The metric holding the number in front of the state text ({@code 4} for {@code 4: ACTIVE}). */
    static final String PORT_STATE = "port_state";
    /** The metric holding the number in front of the physical state text ({@code 5} for {@code 5: LinkUp}). */
    static final String PHYS_STATE = "port_phys_state";

    private final Sysfs sys;

    PortSampler(Sysfs sys) {
        this.sys = sys;
    }

    @Override
    public Map<String, DeviceSample> sample(Collection<String> ids) {
        // every port's attributes in one go: under a root that is not the kernel's sysfs each
        // attribute would otherwise cost a switch to HostFiles' opener thread and back
        List<String> ahead = new ArrayList<>();
        for (String id : ids) {
            String port = folder(id);
            ahead.add(port + "state");
            ahead.add(port + "phys_state");
            for (String c : COUNTERS) {
                ahead.add(port + "counters/" + c);
            }
        }
        Sysfs s = sys.readAhead(ahead);
        Map<String, DeviceSample> out = new LinkedHashMap<>();
        for (String id : ids) {
            out.put(id, sample(s, id));
        }
        return out;
    }

    /** {@code class/infiniband/<dev>/ports/<n>/} of the port {@code <dev>/<n>}. */
    private static String folder(String id) {
        int slash = id.lastIndexOf('/');
        return SysfsPorts.CLASS + "/" + id.substring(0, slash) + "/ports/" + id.substring(slash + 1) + "/";
    }

    private static DeviceSample sample(Sysfs sys, String id) {
        String port = folder(id);
        try {
            Optional<String> gone = sys.folderProblem(port);
            if (gone.isPresent()) {
                return DeviceSample.failed("port " + id + " vanished: " + sys.resolve(port) + " " + gone.get());
            }
            Optional<String> state = sys.attribute(port + "state");
            Optional<String> phys = sys.attribute(port + "phys_state");
            if (state.isEmpty() || phys.isEmpty()) {
                return DeviceSample.failed("port " + id + " vanished: " + sys.resolve(port) + " has no state");
            }
            DeviceSample.Builder b = DeviceSample.builder();
            String stateName = name(state.get());
            String physName = name(phys.get());
            number(state.get()).ifPresent(n -> b.metric(PORT_STATE, n));
            number(phys.get()).ifPresent(n -> b.metric(PHYS_STATE, n));
            if (!"ACTIVE".equals(stateName) || !"LinkUp".equals(physName)) {
                b.health(HealthState.FAILED, "port " + id + " state " + stateName + " (phys_state " + physName + ")");
            }
            for (String c : COUNTERS) {
                Optional<Long> v = sys.longAttribute(port + "counters/" + c);
                v.ifPresent(n -> b.metric(c, n));
            }
            return b.build();
        } catch (DeviceDriverException e) {
            return DeviceSample.failed("port " + id + " cannot be read: " + e.getMessage());
        }
    }

    /** {@code "4: ACTIVE"} -> {@code ACTIVE}; the whole text when it has no number. */
    private static String name(String v) {
        int colon = v.indexOf(':');
        return colon < 0 ? v.strip() : v.substring(colon + 1).strip();
    }

    private static Optional<Long> number(String v) {
        int colon = v.indexOf(':');
        if (colon <= 0) {
            return Optional.empty();
        }
        try {
            return Optional.of(Long.parseLong(v.substring(0, colon).strip()));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }
}
