package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.config.DriverParams;

import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which Xids fail a device: the {@code health.ignored-xids} parameter, as NVIDIA's Kubernetes
 * device plugin reads {@code DP_DISABLE_HEALTHCHECKS}. By default every critical Xid fails its
 * device except the application errors 13, 31, 43, 45, 68 and 109, which are a job's fault, not the
 * device's (the device plugin's list). {@code all} ignores every Xid (health from ECC events and a
 * lost GPU only); {@code none} counts every Xid.
 */
final class XidPolicy {

    /** The parameter. */
    static final String KEY = "health.ignored-xids";
    /** The application Xids NVIDIA's device plugin ignores. */
    static final Set<Long> APPLICATION_XIDS = Set.of(13L, 31L, 43L, 45L, 68L, 109L);
    static final String DEFAULT = "13,31,43,45,68,109";

    private static final Map<Long, String> NAMES = Map.ofEntries(
            Map.entry(13L, "graphics engine exception"),
            Map.entry(31L, "GPU memory page fault"),
            Map.entry(43L, "GPU stopped processing"),
            Map.entry(45L, "preemptive cleanup, due to previous errors"),
            Map.entry(48L, "double-bit ECC error"),
            Map.entry(61L, "internal micro-controller breakpoint/warning"),
            Map.entry(62L, "internal micro-controller halt"),
            Map.entry(63L, "ECC page retirement or row remapping recording event"),
            Map.entry(64L, "ECC page retirement or row remapper recording failure"),
            Map.entry(68L, "NVDEC0 exception"),
            Map.entry(74L, "NVLink error"),
            Map.entry(79L, "GPU has fallen off the bus"),
            Map.entry(92L, "high single-bit ECC error rate"),
            Map.entry(94L, "contained ECC error"),
            Map.entry(95L, "uncontained ECC error"),
            Map.entry(109L, "context switch timeout"),
            Map.entry(119L, "GSP RPC timeout"),
            Map.entry(120L, "GSP error"));

    private final boolean all;
    private final Set<Long> ignored;

    private XidPolicy(boolean all, Set<Long> ignored) {
        this.all = all;
        this.ignored = Collections.unmodifiableSet(ignored);
    }

    /** The default: the application Xids ignored. */
    static XidPolicy defaults() {
        return new XidPolicy(false, new TreeSet<>(APPLICATION_XIDS));
    }

    /** Reads {@link #KEY}; a bad value is one problem in {@code params} naming the full key. */
    static XidPolicy read(DriverParams params) {
        String raw = params.string(KEY, DEFAULT).strip();
        try {
            return parse(raw);
        } catch (IllegalArgumentException e) {
            params.problem(KEY, "expected a comma-separated list of Xid numbers (default " + DEFAULT
                    + ", the application errors), 'all' (no Xid fails a GPU) or 'none' (every Xid does)"
                    + " but got " + DriverParams.quoted(raw) + ": " + e.getMessage());
            return defaults();
        }
    }

    static XidPolicy parse(String raw) {
        String v = raw.strip();
        if (v.equalsIgnoreCase("all")) {
            return new XidPolicy(true, Set.of());
        }
        if (v.equalsIgnoreCase("none")) {
            return new XidPolicy(false, Set.of());
        }
        // an empty value or entry is a slip (a list cut short), not a way to say none: "none" says it
        if (v.isEmpty()) {
            throw new IllegalArgumentException("the value is empty; write 'none' to count every Xid");
        }
        Set<Long> out = new TreeSet<>();
        String[] parts = v.split(",", -1);
        for (int i = 0; i < parts.length; i++) {
            String p = parts[i].strip();
            if (p.isEmpty()) {
                throw new IllegalArgumentException("entry " + (i + 1) + " of " + parts.length + " is empty");
            }
            if (!p.matches("\\d{1,5}")) {
                throw new IllegalArgumentException("'" + p + "' is not an Xid number");
            }
            out.add(Long.parseLong(p));
        }
        return new XidPolicy(false, out);
    }

    /** Whether Xid {@code xid} fails the device it names. */
    boolean fails(long xid) {
        return !all && !ignored.contains(xid);
    }

    /** {@code Xid 79 (GPU has fallen off the bus)}. */
    static String describe(long xid) {
        String name = NAMES.get(xid);
        return "Xid " + xid + (name == null ? "" : " (" + name + ")");
    }

    @Override
    public String toString() {
        return all ? "all Xids ignored" : ignored.isEmpty() ? "every Xid counts" : "Xids " + ignored + " ignored";
    }
}
