package io.flinkdevices.job;

import io.flinkdevices.job.internal.lease.LeaseAsk;
import io.flinkdevices.job.internal.lease.LeaseRefusedException;
import io.flinkdevices.job.internal.lease.LeaseTable;
import io.flinkdevices.sdk.info.DeviceSelection;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.RuntimeContext;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Gives each task its own device, or its own share of one, out of the devices its TaskManager
 * received. Flink hands every task of a TaskManager all of them; a lease says which ones this task
 * uses, and no other task of the TaskManager, of this job or another, gets them while it holds
 * them. Lease in {@code open()}, close in {@code close()}:
 *
 * <pre>{@code
 * public void open(OpenContext ctx) {
 *     lease = DeviceLeases.acquire(getRuntimeContext(), "gpu");      // one whole GPU
 *     GpuInfo gpu = lease.first(GpuInfo::from);
 * }
 * public void close() {
 *     lease.close();
 * }
 * }</pre>
 *
 * <p>The TaskManager keeps one lease table for all its jobs, tasks and user-code class loaders.
 * Tasks in one slot (the operators of one subtask in a slot sharing group) share one lease by
 * default. A lease ends when it is closed, or when the task attempt's thread ends without closing
 * it (a failed or cancelled attempt): the restarted attempt then gets a device again. Devices
 * whose {@code health} is {@code failed} are never leased; {@code degraded} ones only when no
 * working one is free. When other tasks hold the devices, the acquire waits for them at most the
 * request's wait ({@link DeviceRequest#DEFAULT_WAIT} unless told otherwise), then fails with a
 * {@link DeviceLeaseException} that says who holds what. A lease publishes its devices' live keys
 * as gauges in the task's metric group, as {@link DeviceMetrics#register} does.
 */
@PublicEvolving
public final class DeviceLeases {

    private DeviceLeases() {}

    /** Leases one whole device of {@code resourceName}. */
    public static DeviceLease acquire(RuntimeContext context, String resourceName) {
        return acquire(context, DeviceRequest.whole(resourceName));
    }

    /**
     * Leases a share of one device of {@code resourceName}, {@code 0 < share <= 1}: tasks whose
     * shares add up to at most 1 use one device together.
     */
    public static DeviceLease acquire(RuntimeContext context, String resourceName, double share) {
        return acquire(context, DeviceRequest.share(resourceName, share));
    }

    /** Leases {@code count} whole devices of {@code resourceName}. */
    public static DeviceLease acquire(RuntimeContext context, String resourceName, int count) {
        return acquire(context, DeviceRequest.devices(resourceName, count));
    }

    /**
     * Leases what {@code request} asks for.
     *
     * @throws DeviceLeaseException when the TaskManager has no or too few devices of the resource,
     *     or other tasks hold them past the request's wait
     */
    public static DeviceLease acquire(RuntimeContext context, DeviceRequest request) {
        String resource = request.resource();
        Set<ExternalResourceInfo> given = context.getExternalResourceInfos(resource);
        List<ExternalResourceInfo> infos = given == null ? List.of() : new ArrayList<>(given);
        TaskInfo task = context.getTaskInfo();
        String jobId = String.valueOf(context.getJobInfo().getJobId());
        String who = "'" + task.getTaskNameWithSubtasks() + "' attempt " + task.getAttemptNumber() + " of job " + jobId;
        if (infos.isEmpty()) {
            throw new DeviceLeaseException(resource, "cannot lease " + request + " for " + who + ": this TaskManager has no"
                    + " device of external resource '" + resource + "' (is '" + resource + "' listed in external-resources,"
                    + " and did its driver start? see the TaskManager log for 'Failed to retrieve information of"
                    + " external resource')", null);
        }
        if (request.count() > infos.size()) {
            throw new DeviceLeaseException(resource, "cannot lease " + request.count() + " whole devices of external resource '"
                    + resource + "' for " + who + ": this TaskManager has " + infos.size()
                    + (infos.size() == 1 ? " device" : " devices") + " of it", null);
        }
        long share = Math.round(request.share() * LeaseTable.WHOLE);
        LeaseAsk ask = new LeaseAsk(resource, infos, request.count(), share, key(context, request, jobId), who,
                request.waitTime().toNanos(), DeviceSelection.order());
        LeaseTable table = LeaseTable.shared();
        LeaseTable.Grant grant;
        try {
            grant = table.acquire(ask);
        } catch (LeaseRefusedException e) {
            throw new DeviceLeaseException(resource, e.getMessage(), null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DeviceLeaseException(resource, "interrupted while " + who + " waited for " + request, e);
        }
        DeviceLease lease = new DeviceLease(resource, grant, table, ask);
        if (request.gauges()) {
            try {
                DeviceMetrics.register(context.getMetricGroup(), resource, grant.devices());
            } catch (RuntimeException e) {
                lease.close();
                throw e;
            }
        }
        return lease;
    }

    private static String key(RuntimeContext context, DeviceRequest request, String jobId) {
        if (request.key() != null) {
            return "job " + jobId + " key " + request.key();
        }
        String slot = context.getTaskInfo().getAllocationIDAsString();
        if (slot != null && !slot.isEmpty()) {
            return "slot " + slot;
        }
        return "job " + jobId + " subtask " + context.getTaskInfo().getIndexOfThisSubtask();
    }
}
