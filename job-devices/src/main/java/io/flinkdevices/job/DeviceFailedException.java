package io.flinkdevices.job;

import org.apache.flink.annotation.PublicEvolving;

/**
 * Thrown by {@link DeviceHealthGuard#check()} once a device of the task is {@code failed}: the
 * task fails and Flink's restart strategy takes over. The message names the resource, the device,
 * the reason the driver's monitor gave and since when.
 */
@PublicEvolving
public final class DeviceFailedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String resource;
    private final String device;
    private final String reason;

    DeviceFailedException(String resource, String device, String reason, String since) {
        super("Device " + device + " of external resource '" + resource + "' failed: " + reason
                + (since == null ? "" : " (since " + since + ")")
                + "; failing the task so that Flink's restart strategy takes over"
                + " (external-resource." + resource + ".param.health.action: fail-tasks; set it to report to keep tasks running)");
        this.resource = resource;
        this.device = device;
        this.reason = reason;
    }

    /** The external resource name, for example {@code rdma}. */
    public String resource() {
        return resource;
    }

    /** The device as the driver names it, for example {@code mlx5_0/1}. */
    public String device() {
        return device;
    }

    /** The reason the driver's monitor gave, for example {@code port mlx5_0/1 state DOWN (phys_state Disabled)}. */
    public String reason() {
        return reason;
    }
}
