package io.flinkdevices.rdma;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.DeviceSampler;
import io.flinkdevices.sdk.health.HealthState;
import io.flinkdevices.sdk.host.HostValues;
import io.flinkdevices.sdk.host.Sysfs;
import io.flinkdevices.sdk.reference.MetricDoc;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Samples the handed-out ports from sysfs, no process: {@code ports/<n>/state} and {@code
 * phys_state} for health (ACTIVE with LinkErrorRecovery, a link that retrains after errors, is
 * {@code degraded}; anything else but ACTIVE/LinkUp is {@code failed}; back to both is recovery;
 * a port or device folder that vanished is {@code failed}), and the counters of {@code
 * ports/<n>/counters/} as metrics. A counter or state number that is no such number is a failed
 * sample (counted in {@code monitor.errors}), never a metric or a failed port.
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

    /** What {@link #sample} publishes, for the reference page ({@code RdmaDriverFactory#metrics()}). */
    static final List<MetricDoc> METRICS = List.of(
            MetricDoc.of(PORT_STATE, "the number in `state`", "4 = ACTIVE, 1 = DOWN, 2 = INIT, 3 = ARMED"),
            MetricDoc.of(PHYS_STATE, "the number in `phys_state`",
                    "5 = LinkUp, 3 = Disabled, 2 = Polling, 6 = LinkErrorRecovery (degraded while ACTIVE)"),
            MetricDoc.of(COUNTERS.get(0), "`counters/port_rcv_data`", "4-octet words received (x 4 for bytes)"),
            MetricDoc.of(COUNTERS.get(1), "`counters/port_xmit_data`", "4-octet words sent (x 4 for bytes)"),
            MetricDoc.of(COUNTERS.get(2), "`counters/symbol_error`", "errors"),
            MetricDoc.of(COUNTERS.get(3), "`counters/link_downed`", "times the link went down"));

    private final Sysfs sys;

    PortSampler(Sysfs sys) {
        this.sys = sys;
    }

    @Override
    public Map<String, DeviceSample> sample(Collection<String> ids) throws DeviceDriverException {
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

    /**
     * One port's sample. What cannot be read (a port gone, a file that is not a file) is the port's
     * health; a number that is there but is no count or state ({@code -5}, {@code NaN},
     * {@code 18446744073709551615}, random bytes) is thrown: the monitor counts a failed sample
     * rather than turning garbage into a metric or a failed port.
     */
    private static DeviceSample sample(Sysfs sys, String id) throws DeviceDriverException {
        String port = folder(id);
        Optional<String> state;
        Optional<String> phys;
        Map<String, String> counters = new LinkedHashMap<>();
        try {
            Optional<String> gone = sys.folderProblem(port);
            if (gone.isPresent()) {
                return DeviceSample.failed("port " + id + " vanished: " + sys.resolve(port) + " " + gone.get());
            }
            state = sys.attribute(port + "state");
            phys = sys.attribute(port + "phys_state");
            if (state.isEmpty() || phys.isEmpty()) {
                return DeviceSample.failed("port " + id + " vanished: " + sys.resolve(port) + " has no state");
            }
            for (String c : COUNTERS) {
                Optional<String> v = sys.attribute(port + "counters/" + c);
                if (v.isPresent()) {
                    counters.put(c, v.get());
                }
            }
        } catch (DeviceDriverException e) {
            return DeviceSample.failed("port " + id + " cannot be read: " + e.getMessage());
        }
        HostValues values = HostValues.of("sysfs", "port " + id);
        DeviceSample.Builder b = DeviceSample.builder();
        String stateName = name(state.get());
        String physName = name(phys.get());
        number(values, sys.resolve(port + "state").toString(), state.get(), b, PORT_STATE);
        number(values, sys.resolve(port + "phys_state").toString(), phys.get(), b, PHYS_STATE);
        if ("ACTIVE".equals(stateName) && RdmaPort.ERROR_RECOVERY.equals(physName)) {
            b.health(HealthState.DEGRADED, "port " + id + " state ACTIVE but phys_state " + physName
                    + ": the link retrains after errors (traffic flows, not well)");
        } else if (!"ACTIVE".equals(stateName) || !"LinkUp".equals(physName)) {
            b.health(HealthState.FAILED, "port " + id + " state " + stateName + " (phys_state " + physName + ")");
        }
        for (Map.Entry<String, String> c : counters.entrySet()) {
            b.metric(c.getKey(), values.count(sys.resolve(port + "counters/" + c.getKey()).toString(), c.getValue()));
        }
        return b.build();
    }

    /** {@code "4: ACTIVE"} -> {@code ACTIVE}; the whole text when it has no number. */
    private static String name(String v) {
        int colon = v.indexOf(':');
        return colon < 0 ? v.strip() : v.substring(colon + 1).strip();
    }

    /**
     * The number in front of a state text ({@code 4} of {@code 4: ACTIVE}) as the metric {@code
     * metric}; none when the text has no number. The kernel's port states are 0 to 5 and its
     * physical states 0 to 7: anything but a small whole number is garbage.
     */
    private static void number(HostValues values, String file, String v, DeviceSample.Builder b, String metric)
            throws DeviceDriverException {
        int colon = v.indexOf(':');
        if (colon > 0) {
            b.metric(metric, values.number(file, v.substring(0, colon).strip(), 0, 255, "(the kernel's state number)"));
        }
    }
}
