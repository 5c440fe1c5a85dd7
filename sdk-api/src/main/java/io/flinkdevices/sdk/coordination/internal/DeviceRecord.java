package io.flinkdevices.sdk.coordination.internal;

import java.util.Objects;

/**
 * One line of a coordination file: a device id and the process that holds it.
 *
 * <p>A record read from a damaged line may lack the owner's start token or scope ({@code ?}); its
 * owner is then taken to be alive whenever a process with its PID runs.
 */
public final class DeviceRecord {

    private final String deviceId;
    private final long pid;
    private final String start;
    private final String bootId;
    private final String pidNamespace;

    public DeviceRecord(String deviceId, long pid, String start, String bootId, String pidNamespace) {
        if (deviceId.isEmpty()) {
            throw new IllegalArgumentException("empty device id");
        }
        this.deviceId = deviceId;
        this.pid = pid;
        this.start = Objects.requireNonNull(start);
        this.bootId = Objects.requireNonNull(bootId);
        this.pidNamespace = Objects.requireNonNull(pidNamespace);
    }

    /** A record saying that {@code owner} holds {@code deviceId}. */
    public static DeviceRecord of(String deviceId, ProcessIdentity owner) {
        return new DeviceRecord(
                deviceId, owner.pid(), owner.start(), owner.bootId(), owner.pidNamespace());
    }

    public String deviceId() {
        return deviceId;
    }

    public long pid() {
        return pid;
    }

    public String start() {
        return start;
    }

    public String bootId() {
        return bootId;
    }

    public String pidNamespace() {
        return pidNamespace;
    }

    /** Whether {@code p} is the very process this record names (same PID, start and scope). */
    public boolean isOwnedBy(ProcessIdentity p) {
        return pid == p.pid()
                && start.equals(p.start())
                && ProcessIdentity.isKnown(start)
                && bootId.equals(p.bootId())
                && pidNamespace.equals(p.pidNamespace());
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof DeviceRecord)) {
            return false;
        }
        DeviceRecord r = (DeviceRecord) o;
        return deviceId.equals(r.deviceId)
                && pid == r.pid
                && start.equals(r.start)
                && bootId.equals(r.bootId)
                && pidNamespace.equals(r.pidNamespace);
    }

    @Override
    public int hashCode() {
        return Objects.hash(deviceId, pid, start, bootId, pidNamespace);
    }

    @Override
    public String toString() {
        return deviceId + " held by pid " + pid;
    }
}
