package io.flinkdevices.job;

import io.flinkdevices.sdk.health.HealthAction;
import io.flinkdevices.sdk.info.LiveProperties;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.RuntimeContext;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Fails a task whose device failed, so that Flink's restart strategy takes over instead of the
 * task working on a dead device. Create it in {@code open()}, call {@link #check()} where the task
 * uses the device (per record or per batch: a check reads the latest sample, a few map lookups,
 * and never waits):
 *
 * <pre>{@code
 * public void open(OpenContext ctx) {
 *     guard = DeviceHealthGuard.of(getRuntimeContext(), "rdma");
 * }
 * public Out map(In in) {
 *     guard.check();   // throws DeviceFailedException naming the device and the reason
 *     ...
 * }
 * }</pre>
 *
 * <p>It acts only on devices whose driver says {@code health.action: fail-tasks} (the default);
 * with {@code report} it never throws. Devices without monitoring never fail the check.
 */
@PublicEvolving
public final class DeviceHealthGuard {

    private final String resource;
    private final List<ExternalResourceInfo> infos;

    private DeviceHealthGuard(String resource, Collection<? extends ExternalResourceInfo> infos) {
        this.resource = resource;
        this.infos = List.copyOf(infos);
    }

    /** Guards every device of {@code resourceName} the task's TaskManager handed it. */
    public static DeviceHealthGuard of(RuntimeContext context, String resourceName) {
        return new DeviceHealthGuard(resourceName, context.getExternalResourceInfos(resourceName));
    }

    /** Guards the devices a task picked itself (one device of several, say). */
    public static DeviceHealthGuard of(String resourceName, Collection<? extends ExternalResourceInfo> infos) {
        return new DeviceHealthGuard(resourceName, infos);
    }

    /**
     * The devices of {@code resourceName} the task's TaskManager handed it that are not {@code
     * failed} now, in Flink's order: what a task picks its device from in {@code open()}, so that
     * the task Flink restarts after a device failed is not given that device again (with
     * coordination on, no other TaskManager of the host is handed it either: it is quarantined).
     * Devices without monitoring count as healthy.
     *
     * <pre>{@code
     * List<ExternalResourceInfo> ports = DeviceHealthGuard.healthy(getRuntimeContext(), "rdma");
     * ExternalResourceInfo mine = ports.get(getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() % ports.size());
     * guard = DeviceHealthGuard.of("rdma", List.of(mine));
     * }</pre>
     *
     * @throws DeviceFailedException when every device of the resource is {@code failed} (naming
     *     the first), so that the restart strategy tries again later
     */
    public static List<ExternalResourceInfo> healthy(RuntimeContext context, String resourceName) {
        return healthy(resourceName, context.getExternalResourceInfos(resourceName));
    }

    /**
     * The devices of {@code infos} that are not {@code failed} now (see {@link
     * #healthy(RuntimeContext, String)}).
     *
     * @throws DeviceFailedException when every one of them is {@code failed}
     */
    public static List<ExternalResourceInfo> healthy(String resourceName, Collection<? extends ExternalResourceInfo> infos) {
        List<ExternalResourceInfo> out = new ArrayList<>();
        ExternalResourceInfo firstFailed = null;
        for (ExternalResourceInfo info : infos) {
            if ("failed".equals(DeviceMetrics.property(info, LiveProperties.KEY_HEALTH).orElse(null))) {
                firstFailed = firstFailed == null ? info : firstFailed;
            } else {
                out.add(info);
            }
        }
        if (out.isEmpty() && firstFailed != null) {
            throw failure(resourceName, firstFailed);
        }
        return out;
    }

    private static DeviceFailedException failure(String resource, ExternalResourceInfo info) {
        return new DeviceFailedException(
                resource,
                DeviceMetrics.property(info, LiveProperties.KEY_HEALTH_DEVICE).orElse(String.valueOf(info)),
                DeviceMetrics.property(info, LiveProperties.KEY_HEALTH_REASON).orElse("no reason given"),
                DeviceMetrics.property(info, LiveProperties.KEY_HEALTH_SINCE).orElse(null));
    }

    /**
     * Throws when a guarded device is {@code failed} and its action is {@code fail-tasks}.
     *
     * @throws DeviceFailedException naming the resource, the device and the reason
     */
    public void check() {
        for (int i = 0; i < infos.size(); i++) {
            ExternalResourceInfo info = infos.get(i);
            if (!"failed".equals(DeviceMetrics.property(info, LiveProperties.KEY_HEALTH).orElse(null))) {
                continue;
            }
            HealthAction action = HealthAction.parseOrDefault(DeviceMetrics.property(info, LiveProperties.KEY_HEALTH_ACTION).orElse(null));
            if (action != HealthAction.FAIL_TASKS) {
                continue;
            }
            throw failure(resource, info);
        }
    }

    /** The guarded devices that are failed now, as {@code <device>: <reason>}, whatever the action. */
    public List<String> failedDevices() {
        List<String> out = new ArrayList<>();
        for (ExternalResourceInfo info : infos) {
            if ("failed".equals(DeviceMetrics.property(info, LiveProperties.KEY_HEALTH).orElse(null))) {
                Optional<String> id = DeviceMetrics.property(info, LiveProperties.KEY_HEALTH_DEVICE);
                out.add(id.orElse(String.valueOf(info)) + ": "
                        + DeviceMetrics.property(info, LiveProperties.KEY_HEALTH_REASON).orElse("no reason given"));
            }
        }
        return out;
    }

    @Override
    public String toString() {
        return "DeviceHealthGuard{" + resource + ", " + infos.size() + " devices}";
    }
}
