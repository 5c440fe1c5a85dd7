package io.flinkdevices.sdk.coordination.internal;

import java.util.Objects;

/**
 * One quarantine line of a coordination file: a device whose health turned {@code failed}, why,
 * since when and who saw it. While it stands, no allocation hands the device (nor a part of it, nor
 * the device a quarantined part belongs to) to anyone.
 */
public final class QuarantineRecord {

    private final String deviceId;
    private final long sinceMillis;
    private final String who;
    private final String reason;

    /**
     * @param deviceId the coordination id of the device
     * @param sinceMillis when its health was first seen failed, in milliseconds since the epoch
     * @param who the process that saw it ({@code TaskManagerRunner pid 4242 (rdma)})
     * @param reason what it saw, one line
     */
    public QuarantineRecord(String deviceId, long sinceMillis, String who, String reason) {
        if (deviceId.isEmpty()) {
            throw new IllegalArgumentException("empty device id");
        }
        this.deviceId = deviceId;
        this.sinceMillis = sinceMillis;
        this.who = Objects.requireNonNull(who);
        this.reason = Objects.requireNonNull(reason);
    }

    public String deviceId() {
        return deviceId;
    }

    public long sinceMillis() {
        return sinceMillis;
    }

    public String who() {
        return who;
    }

    public String reason() {
        return reason;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof QuarantineRecord)) {
            return false;
        }
        QuarantineRecord q = (QuarantineRecord) o;
        return deviceId.equals(q.deviceId) && sinceMillis == q.sinceMillis && who.equals(q.who) && reason.equals(q.reason);
    }

    @Override
    public int hashCode() {
        return Objects.hash(deviceId, sinceMillis, who, reason);
    }

    @Override
    public String toString() {
        return deviceId + " quarantined since " + sinceMillis + " by " + who + ": " + reason;
    }
}
