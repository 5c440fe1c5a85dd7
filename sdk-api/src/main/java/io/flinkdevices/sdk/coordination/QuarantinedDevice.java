package io.flinkdevices.sdk.coordination;

import org.apache.flink.annotation.PublicEvolving;

import java.time.Instant;
import java.util.Objects;

/**
 * A device out of service in a coordination file: its health turned {@code failed}, so no
 * TaskManager of the host is handed it (nor a part of it, nor the device it is a part of) until it
 * has been healthy for {@code health.recover-after} or an operator clears it.
 */
@PublicEvolving
public final class QuarantinedDevice {

    private final String deviceId;
    private final String reason;
    private final Instant since;
    private final String seenBy;

    QuarantinedDevice(String deviceId, String reason, Instant since, String seenBy) {
        this.deviceId = Objects.requireNonNull(deviceId);
        this.reason = Objects.requireNonNull(reason);
        this.since = Objects.requireNonNull(since);
        this.seenBy = Objects.requireNonNull(seenBy);
    }

    /** The device's coordination id ({@code 0000:0c:00.0}, {@code mlx5_0/1}). */
    public String deviceId() {
        return deviceId;
    }

    /** What the monitor saw, one line ({@code port mlx5_0/1 state DOWN}). */
    public String reason() {
        return reason;
    }

    /** When the device was taken out of service. */
    public Instant since() {
        return since;
    }

    /** The process that saw it fail ({@code TaskManagerRunner pid 4242 (rdma)}). */
    public String seenBy() {
        return seenBy;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof QuarantinedDevice)) {
            return false;
        }
        QuarantinedDevice q = (QuarantinedDevice) o;
        return deviceId.equals(q.deviceId) && reason.equals(q.reason) && since.equals(q.since) && seenBy.equals(q.seenBy);
    }

    @Override
    public int hashCode() {
        return Objects.hash(deviceId, reason, since, seenBy);
    }

    @Override
    public String toString() {
        return deviceId + ": " + reason + " (since " + since + ", seen by " + seenBy + ")";
    }
}
