package io.flinkdevices.job.internal.lease;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The rules of the TaskManager's lease table: who holds which device, and how much of it.
 *
 * <p>A lease group is what tasks sharing one key hold together (the operators of one slot, by
 * default): some devices, each at the same share. A task joins a group by its key and leaves it
 * with {@link #release}; a group whose holders all left, or whose holding threads all ended (a task
 * attempt that ended without closing its lease), is gone at the next change of the table. Every
 * change runs under the table's monitor and wakes the acquirers that wait for a device.
 *
 * <p>Devices are the info objects Flink handed the TaskManager: the same objects for every task of
 * that TaskManager, and different objects in another TaskManager, also in one JVM. A device is
 * never held past a share of 1 in all. A {@code failed} device is never handed out.
 */
public final class LeaseTable {

    /** A whole device, in the millionths shares are counted in. */
    public static final long WHOLE = 1_000_000L;

    private static final AtomicLong TOKENS = new AtomicLong();

    private static final String G_RESOURCE = "resource";
    private static final String G_KEY = "key";
    private static final String G_RETIRED = "retired";
    private static final String G_DEVICES = "devices";
    private static final String G_SHARE = "share";
    private static final String G_HOLDERS = "holders";

    private final Map<String, Object> root;

    private LeaseTable(Map<String, Object> root) {
        this.root = root;
    }

    /** The table of this JVM, shared by every class loader in it. */
    public static LeaseTable shared() {
        return new LeaseTable(SharedRoot.get());
    }

    /** A table of its own, for tests of the rules. */
    public static LeaseTable isolated() {
        Map<String, Object> root = new HashMap<>();
        root.put(SharedRoot.KEY_FORMAT, SharedRoot.FORMAT);
        root.put(SharedRoot.KEY_GROUPS, new ArrayList<Object>());
        return new LeaseTable(root);
    }

    /**
     * Takes what {@code ask} asks for, waiting up to its deadline for devices other tasks hold.
     *
     * @throws LeaseRefusedException when the devices cannot be had by then, or the ask contradicts
     *     the group it would join
     * @throws InterruptedException when the thread is interrupted while it waits
     */
    public Grant acquire(LeaseAsk ask) throws LeaseRefusedException, InterruptedException {
        synchronized (root) {
            while (true) {
                purge();
                Grant grant = tryAcquire(ask);
                if (grant != null) {
                    return grant;
                }
                long left = ask.deadlineNanos - System.nanoTime();
                if (left <= 0) {
                    throw new LeaseRefusedException(refusal(ask));
                }
                // Releases wake us; an attempt that ended without closing its lease is only seen by
                // looking again, so look at least every 20 ms.
                long waitMs = Math.max(1, Math.min(20, left / 1_000_000L));
                root.wait(waitMs);
            }
        }
    }

    /** Gives back one holder's part; does nothing for a token already given back. */
    public void release(Grant grant) {
        synchronized (root) {
            for (Map<String, Object> g : groups()) {
                if (holders(g).removeIf(h -> grant.token.equals(((Object[]) h)[1]))) {
                    break;
                }
            }
            purge();
            root.notifyAll();
        }
    }

    /** Each device's held share in millionths, keyed by the info object; for diagnostics and tests. */
    public Map<ExternalResourceInfo, Long> usage(Collection<? extends ExternalResourceInfo> infos) {
        synchronized (root) {
            purge();
            Map<ExternalResourceInfo, Long> out = new IdentityHashMap<>();
            for (ExternalResourceInfo info : infos) {
                out.put(info, used(info));
            }
            return out;
        }
    }

    private Grant tryAcquire(LeaseAsk ask) throws LeaseRefusedException {
        Map<String, Object> joined = findGroup(ask);
        if (joined != null) {
            long share = (Long) joined.get(G_SHARE);
            List<Object> devices = devices(joined);
            if (share != ask.shareMillionths || devices.size() != ask.count) {
                throw new LeaseRefusedException("tasks that share the lease key '" + ask.key + "' of external resource '"
                        + ask.resource + "' asked for different amounts: " + Amounts.describe(ask.count, ask.shareMillionths)
                        + " here, " + Amounts.describe(devices.size(), share) + " held by " + holderNames(joined)
                        + "; give tasks that ask for different amounts different lease keys");
            }
            if (devices.stream().noneMatch(d -> Health.isFailed((ExternalResourceInfo) d))) {
                return addHolder(joined, ask);
            }
            // A device of the group failed: the restarted attempt gets another; the old group keeps its
            // share until its holders are gone.
            joined.put(G_RETIRED, Boolean.TRUE);
        }
        List<ExternalResourceInfo> picked = pick(ask);
        if (picked == null) {
            return null;
        }
        Map<String, Object> g = new HashMap<>();
        g.put(G_RESOURCE, ask.resource);
        g.put(G_KEY, ask.key);
        g.put(G_RETIRED, Boolean.FALSE);
        g.put(G_DEVICES, new ArrayList<Object>(picked));
        g.put(G_SHARE, ask.shareMillionths);
        g.put(G_HOLDERS, new ArrayList<Object>());
        groups().add(g);
        return addHolder(g, ask);
    }

    private List<ExternalResourceInfo> pick(LeaseAsk ask) {
        List<ExternalResourceInfo> candidates = new ArrayList<>();
        Map<ExternalResourceInfo, Long> used = new IdentityHashMap<>();
        for (ExternalResourceInfo info : ask.infos) {
            if (Health.isFailed(info)) {
                continue;
            }
            long u = used(info);
            if (u + ask.shareMillionths <= WHOLE) {
                candidates.add(info);
                used.put(info, u);
            }
        }
        if (candidates.size() < ask.count) {
            return null;
        }
        // Working devices before degraded ones; then the least used (tasks with shares spread over
        // the devices); then a fixed order, so that a restarted task tends to get the same device.
        candidates.sort(Comparator.comparingInt(Health::rank)
                .thenComparingLong(used::get)
                .thenComparing(ask.order));
        return new ArrayList<>(candidates.subList(0, ask.count));
    }

    private Grant addHolder(Map<String, Object> g, LeaseAsk ask) {
        String token = "lease-" + TOKENS.incrementAndGet() + "@" + System.identityHashCode(this);
        holders(g).add(new Object[] {new WeakReference<>(Thread.currentThread()), token, ask.who});
        List<ExternalResourceInfo> devices = new ArrayList<>();
        for (Object d : devices(g)) {
            devices.add((ExternalResourceInfo) d);
        }
        return new Grant(token, devices, (Long) g.get(G_SHARE));
    }

    private Map<String, Object> findGroup(LeaseAsk ask) {
        for (Map<String, Object> g : groups()) {
            if (Boolean.TRUE.equals(g.get(G_RETIRED))
                    || !ask.resource.equals(g.get(G_RESOURCE))
                    || !ask.key.equals(g.get(G_KEY))) {
                continue;
            }
            // the same key in another TaskManager of this JVM is another group
            boolean sameTaskManager = devices(g).stream().allMatch(d -> containsIdentical(ask.infos, d));
            if (sameTaskManager) {
                return g;
            }
        }
        return null;
    }

    private static boolean containsIdentical(List<ExternalResourceInfo> infos, Object device) {
        for (ExternalResourceInfo i : infos) {
            if (i == device) {
                return true;
            }
        }
        return false;
    }

    private long used(ExternalResourceInfo info) {
        long sum = 0;
        for (Map<String, Object> g : groups()) {
            for (Object d : devices(g)) {
                if (d == info) {
                    sum += (Long) g.get(G_SHARE);
                }
            }
        }
        return sum;
    }

    /** Drops holders whose thread ended and groups nobody holds. */
    private void purge() {
        for (Iterator<Map<String, Object>> it = groups().iterator(); it.hasNext(); ) {
            Map<String, Object> g = it.next();
            holders(g).removeIf(h -> {
                Thread t = (Thread) ((WeakReference<?>) ((Object[]) h)[0]).get();
                return t == null || !t.isAlive();
            });
            if (holders(g).isEmpty()) {
                it.remove();
            }
        }
    }

    private String refusal(LeaseAsk ask) {
        StringBuilder sb = new StringBuilder();
        sb.append("cannot lease ").append(Amounts.describe(ask.count, ask.shareMillionths))
                .append(" of external resource '").append(ask.resource).append("' for ").append(ask.who)
                .append(" within ").append(ask.waitDescription).append(": the TaskManager has ")
                .append(ask.infos.size()).append(ask.infos.size() == 1 ? " device" : " devices");
        sb.append(ask.infos.isEmpty() ? "" : ": ");
        List<ExternalResourceInfo> ordered = new ArrayList<>(ask.infos);
        ordered.sort(ask.order);
        for (int i = 0; i < ordered.size(); i++) {
            ExternalResourceInfo info = ordered.get(i);
            sb.append(i == 0 ? "" : "; ").append(DeviceNames.of(info));
            if (Health.isFailed(info)) {
                sb.append(" out of service (").append(Health.reason(info)).append(')');
                continue;
            }
            List<String> held = new ArrayList<>();
            for (Map<String, Object> g : groups()) {
                for (Object d : devices(g)) {
                    if (d == info) {
                        held.add(Amounts.share((Long) g.get(G_SHARE)) + " by " + holderNames(g));
                    }
                }
            }
            sb.append(held.isEmpty() ? " free" : " held " + String.join(", ", held));
        }
        return sb.toString();
    }

    private static String holderNames(Map<String, Object> g) {
        List<String> names = new ArrayList<>();
        for (Object h : holders(g)) {
            String who = (String) ((Object[]) h)[2];
            if (!names.contains(who)) {
                names.add(who);
            }
        }
        return String.join(" and ", names);
    }

    @SuppressWarnings("unchecked")
    private List<Map<String, Object>> groups() {
        return (List<Map<String, Object>>) root.get(SharedRoot.KEY_GROUPS);
    }

    @SuppressWarnings("unchecked")
    private static List<Object> devices(Map<String, Object> g) {
        return (List<Object>) g.get(G_DEVICES);
    }

    @SuppressWarnings("unchecked")
    private static List<Object> holders(Map<String, Object> g) {
        return (List<Object>) g.get(G_HOLDERS);
    }

    /** What one holder got: its devices and their share. */
    public static final class Grant {
        final String token;
        private final List<ExternalResourceInfo> devices;
        private final long shareMillionths;

        Grant(String token, List<ExternalResourceInfo> devices, long shareMillionths) {
            this.token = token;
            this.devices = List.copyOf(devices);
            this.shareMillionths = shareMillionths;
        }

        /** The devices, in the order they were picked. */
        public List<ExternalResourceInfo> devices() {
            return devices;
        }

        /** The share of each device, in millionths. */
        public long shareMillionths() {
            return shareMillionths;
        }
    }
}
