package io.flinkdevices.job;

import io.flinkdevices.sdk.info.LiveProperties;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Registers a gauge per metric per device a subtask holds, under the operator's metric group, so
 * that every Flink reporter (Prometheus, JMX, Datadog, ...) and the web UI show them. One call in
 * a rich function's {@code open()}:
 *
 * <pre>{@code
 * public void open(OpenContext ctx) {
 *     DeviceMetrics.register(getRuntimeContext(), "rdma");
 * }
 * }</pre>
 *
 * <p>Groups: {@code <operator>.resource.<name>.device.<id>}, with {@code resource} and {@code
 * device} as metric variables (Prometheus labels {@code resource="rdma"}, {@code
 * device="mlx5_0/1"}). Gauges: {@code health} (0 ok, 1 degraded, 2 failed), and one per {@code
 * metric.<name>} key the device has when the call is made ({@code port_rcv_data}, {@code
 * monitor_errors}, ...; dots become {@code _}). A device's metric keys come with its monitor's
 * first sample: a call made before that sample (a slow first sample on a loaded TaskManager) waits
 * for it, at most {@link #FIRST_SAMPLE_WAIT} in all, and registers only {@code health}, {@code
 * monitor_errors} and {@code monitor_samples} for a device still without one, with one WARN line. A gauge reads the info's
 * latest sample, never waits, and reads NaN while the value is absent. Devices without monitoring
 * (the driver does not monitor, or {@code monitor.interval} is 0) get no gauges.
 */
@PublicEvolving
public final class DeviceMetrics {

    /** The group key of the resource name. */
    public static final String RESOURCE_GROUP = "resource";
    /** The group key of the device id. */
    public static final String DEVICE_GROUP = "device";
    /** The gauge of the health: 0 ok, 1 degraded, 2 failed. */
    public static final String HEALTH_GAUGE = "health";
    /** How long a registration waits, in all, for the first sample of devices that have none yet. */
    public static final Duration FIRST_SAMPLE_WAIT = Duration.ofSeconds(10);

    private static final Logger LOG = LoggerFactory.getLogger(DeviceMetrics.class);

    private final Map<String, List<String>> gaugesByDevice;

    private DeviceMetrics(Map<String, List<String>> gaugesByDevice) {
        this.gaugesByDevice = gaugesByDevice;
    }

    /**
     * Registers the gauges of every device of {@code resourceName} this subtask's TaskManager
     * handed it.
     *
     * @return what was registered, by device id
     */
    public static DeviceMetrics register(RuntimeContext context, String resourceName) {
        return register(context.getMetricGroup(), resourceName, context.getExternalResourceInfos(resourceName));
    }

    /** {@link #register(RuntimeContext, String)} for infos a subtask picked itself (one device of several). */
    public static DeviceMetrics register(MetricGroup group, String resourceName, Collection<? extends ExternalResourceInfo> infos) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        awaitFirstSample(resourceName, infos);
        MetricGroup resource = group.addGroup(RESOURCE_GROUP, resourceName);
        for (ExternalResourceInfo info : infos) {
            Optional<String> id = property(info, LiveProperties.KEY_HEALTH_DEVICE);
            if (id.isEmpty()) {
                continue;
            }
            MetricGroup device = resource.addGroup(DEVICE_GROUP, id.get());
            List<String> names = new ArrayList<>();
            device.gauge(HEALTH_GAUGE, (Gauge<Double>) () -> health(info));
            names.add(HEALTH_GAUGE);
            for (String key : keys(info)) {
                if (key.startsWith(LiveProperties.METRIC_PREFIX)) {
                    String name = key.substring(LiveProperties.METRIC_PREFIX.length()).replace('.', '_');
                    device.gauge(name, (Gauge<Double>) () -> number(info, key));
                    names.add(name);
                }
            }
            out.put(id.get(), Collections.unmodifiableList(names));
        }
        return new DeviceMetrics(Collections.unmodifiableMap(out));
    }

    /**
     * Waits until every monitored device has been sampled once (it then has a {@code health}), at
     * most {@link #FIRST_SAMPLE_WAIT}; an interrupt ends the wait and is kept.
     */
    private static void awaitFirstSample(String resourceName, Collection<? extends ExternalResourceInfo> infos) {
        long deadline = System.nanoTime() + FIRST_SAMPLE_WAIT.toNanos();
        List<String> waiting = unsampled(infos);
        while (!waiting.isEmpty() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            waiting = unsampled(infos);
        }
        if (!waiting.isEmpty()) {
            LOG.warn("Devices {} of external resource '{}' had no sample of their monitor after {} s: they get the health and "
                    + "monitor_errors and monitor_samples gauges only, without the device's metrics", waiting, resourceName, FIRST_SAMPLE_WAIT.toSeconds());
        }
    }

    private static List<String> unsampled(Collection<? extends ExternalResourceInfo> infos) {
        List<String> out = new ArrayList<>();
        for (ExternalResourceInfo info : infos) {
            Optional<String> id = property(info, LiveProperties.KEY_HEALTH_DEVICE);
            if (id.isPresent() && property(info, LiveProperties.KEY_HEALTH).isEmpty()) {
                out.add(id.get());
            }
        }
        return out;
    }

    /** The device ids that got gauges. */
    public Collection<String> devices() {
        return gaugesByDevice.keySet();
    }

    /** The gauge names of one device; empty for a device without gauges. */
    public List<String> gauges(String deviceId) {
        return gaugesByDevice.getOrDefault(deviceId, List.of());
    }

    private static double health(ExternalResourceInfo info) {
        Optional<String> h = property(info, LiveProperties.KEY_HEALTH);
        if (h.isEmpty()) {
            return Double.NaN;
        }
        switch (h.get()) {
            case "ok":
                return 0;
            case "degraded":
                return 1;
            case "failed":
                return 2;
            default:
                return Double.NaN;
        }
    }

    private static double number(ExternalResourceInfo info, String key) {
        Optional<String> v = property(info, key);
        if (v.isEmpty()) {
            return Double.NaN;
        }
        try {
            return Double.parseDouble(v.get());
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    // a foreign implementation may break the contract and return null
    static Optional<String> property(ExternalResourceInfo info, String key) {
        Optional<String> v = info.getProperty(key);
        return v == null ? Optional.empty() : v;
    }

    private static Collection<String> keys(ExternalResourceInfo info) {
        Collection<String> k = info.getKeys();
        return k == null ? List.of() : k;
    }

    @Override
    public String toString() {
        return "DeviceMetrics" + gaugesByDevice;
    }
}
