package io.flinkdevices.job;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.operators.SlotSharingGroup;

import java.io.Serializable;
import java.time.Duration;
import java.util.Objects;

/**
 * What a task leases: a resource, how many of its devices, how much of each, under which key, and
 * how long it waits for devices other tasks hold. Immutable and serializable, so a job builds one
 * in {@code main()}, declares it on its slot sharing group and leases by it in {@code open()}:
 *
 * <pre>{@code
 * DeviceRequest half = DeviceRequest.share("gpu", 0.5);
 * SlotSharingGroup gpuSlots = half.declareOn(SlotSharingGroup.newBuilder("gpu")
 *         .setCpuCores(1).setTaskHeapMemoryMB(512)).build();   // Flink wants both with any resource
 * stream.map(new Infer(half)).slotSharingGroup(gpuSlots);
 * ...
 * lease = DeviceLeases.acquire(getRuntimeContext(), half);   // in Infer.open()
 * }</pre>
 *
 * <p>With Flink's fine-grained resource management ({@code
 * cluster.fine-grained-resource-management.enabled: true}) the scheduler then places such slots on
 * TaskManagers by their device amounts, and the tasks in them lease exactly what the group declared.
 */
@PublicEvolving
public final class DeviceRequest implements Serializable {

    private static final long serialVersionUID = 1L;

    /** How long {@link DeviceLeases#acquire} waits for devices other tasks hold, unless told otherwise. */
    public static final Duration DEFAULT_WAIT = Duration.ofSeconds(10);

    /** The longest wait a request takes. */
    public static final Duration MAX_WAIT = Duration.ofHours(1);

    private final String resource;
    private final int count;
    private final double share;
    private final String key;
    private final Duration wait;
    private final boolean gauges;

    private DeviceRequest(String resource, int count, double share, String key, Duration wait, boolean gauges) {
        this.resource = resource;
        this.count = count;
        this.share = share;
        this.key = key;
        this.wait = wait;
        this.gauges = gauges;
    }

    /** One whole device of {@code resource}. */
    public static DeviceRequest whole(String resource) {
        return devices(resource, 1);
    }

    /**
     * {@code count} whole devices of {@code resource}.
     *
     * @throws IllegalArgumentException when {@code count} is not at least 1, or the name is empty
     */
    public static DeviceRequest devices(String resource, int count) {
        checkResource(resource);
        if (count < 1) {
            throw new IllegalArgumentException("a lease of external resource '" + resource
                    + "' needs a count of at least 1 whole device but got " + count);
        }
        return new DeviceRequest(resource, count, 1.0, null, DEFAULT_WAIT, true);
    }

    /**
     * A share of one device of {@code resource}: tasks whose shares add up to at most 1 use one
     * device together (two tasks with 0.5); a device is never given out past 1 in all. A share of 1
     * is a whole device.
     *
     * @throws IllegalArgumentException when {@code share} is not a number greater than 0 and at most
     *     1, or is finer than a millionth, or the name is empty
     */
    public static DeviceRequest share(String resource, double share) {
        checkResource(resource);
        if (!(share > 0 && share <= 1)) {
            throw new IllegalArgumentException("a share of external resource '" + resource
                    + "' must be greater than 0 and at most 1 (a whole device) but is " + share);
        }
        if (Math.round(share * 1_000_000) == 0) {
            throw new IllegalArgumentException("a share of external resource '" + resource
                    + "' must be at least 0.000001 but is " + share);
        }
        return new DeviceRequest(resource, 1, share, null, DEFAULT_WAIT, true);
    }

    /**
     * The same request under another lease key. Tasks that lease with one key share one lease: by
     * default the key is the task's slot, so that the operators of one slot use one device; give a
     * key of your own to share a device across slots, or to keep operators of one slot apart.
     *
     * @throws IllegalArgumentException when the key is empty or has a control character
     */
    public DeviceRequest sharingKey(String key) {
        Objects.requireNonNull(key, "key");
        if (key.isEmpty() || key.chars().anyMatch(Character::isISOControl)) {
            throw new IllegalArgumentException("a lease key must be non-empty text without control characters but is '"
                    + key.replaceAll("\\p{Cntrl}", "?") + "'");
        }
        return new DeviceRequest(resource, count, share, key, wait, gauges);
    }

    /**
     * The same request waiting at most {@code wait} for devices other tasks hold (a task attempt
     * that is still ending, a job that finishes soon); {@link Duration#ZERO} fails at once.
     *
     * @throws IllegalArgumentException when {@code wait} is negative or longer than {@link #MAX_WAIT}
     */
    public DeviceRequest waitAtMost(Duration wait) {
        Objects.requireNonNull(wait, "wait");
        if (wait.isNegative() || wait.compareTo(MAX_WAIT) > 0) {
            throw new IllegalArgumentException("a lease of external resource '" + resource
                    + "' waits from 0 s to " + MAX_WAIT.toMinutes() + " min for devices but was asked to wait " + wait);
        }
        return new DeviceRequest(resource, count, share, key, wait, gauges);
    }

    /** The same request without gauges for the leased devices (they are registered by default). */
    public DeviceRequest withoutGauges() {
        return new DeviceRequest(resource, count, share, key, wait, false);
    }

    /**
     * Declares this request's amount on a slot sharing group ({@code setExternalResource(resource,
     * amount)}), so that fine-grained resource management places the group's slots where the
     * devices are.
     */
    public SlotSharingGroup.Builder declareOn(SlotSharingGroup.Builder group) {
        return group.setExternalResource(resource, amount());
    }

    /** The external resource name. */
    public String resource() {
        return resource;
    }

    /** How many devices. */
    public int count() {
        return count;
    }

    /** How much of each device: 1 for whole devices. */
    public double share() {
        return share;
    }

    /** What the request amounts to in devices: {@code count * share}. */
    public double amount() {
        return count * share;
    }

    /** The lease key given with {@link #sharingKey}, or null for the task's slot. */
    public String key() {
        return key;
    }

    /** How long the request waits for devices other tasks hold. */
    public Duration waitTime() {
        return wait;
    }

    /** Whether the leased devices get gauges in the task's metric group. */
    public boolean gauges() {
        return gauges;
    }

    private static void checkResource(String resource) {
        Objects.requireNonNull(resource, "resource");
        if (resource.isBlank()) {
            throw new IllegalArgumentException("the external resource name of a lease must not be empty");
        }
    }

    @Override
    public String toString() {
        return (share == 1.0 ? count + " x " : share + " of ") + resource + (key == null ? "" : " key " + key);
    }
}
