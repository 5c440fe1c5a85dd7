package io.flinkdevices.job.internal.lease;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/** One task's ask of the lease table: which devices it may get, how many, how much of each, and who it is. */
public final class LeaseAsk {

    final String resource;
    final List<ExternalResourceInfo> infos;
    final int count;
    final long shareMillionths;
    final String key;
    final String who;
    final long deadlineNanos;
    final String waitDescription;
    final Comparator<ExternalResourceInfo> order;

    /**
     * @param infos the devices of {@code resource} the task's TaskManager handed it
     * @param count how many devices
     * @param shareMillionths how much of each, {@link LeaseTable#WHOLE} for whole devices
     * @param key the lease key: tasks asking with the same key share one lease
     * @param who the task, for messages ({@code 'Map (2/4)#0' of job 3f2a...})
     * @param waitNanos how long to wait for devices other tasks hold
     * @param order the fixed order devices are picked in when all else is equal
     */
    public LeaseAsk(String resource, List<ExternalResourceInfo> infos, int count, long shareMillionths, String key,
            String who, long waitNanos, Comparator<ExternalResourceInfo> order) {
        this.resource = Objects.requireNonNull(resource);
        this.infos = List.copyOf(infos);
        this.count = count;
        this.shareMillionths = shareMillionths;
        this.key = Objects.requireNonNull(key);
        this.who = Objects.requireNonNull(who);
        this.deadlineNanos = System.nanoTime() + waitNanos;
        this.waitDescription = Amounts.duration(waitNanos);
        this.order = Objects.requireNonNull(order);
    }

    /** The lease key. */
    public String key() {
        return key;
    }

    /** The task, as messages name it. */
    public String who() {
        return who;
    }
}
