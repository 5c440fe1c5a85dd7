package io.flinkdevices.job;

import org.apache.flink.annotation.PublicEvolving;

/**
 * A task could not lease what it asked for: the resource has no devices in its TaskManager, or
 * other tasks hold them past the request's wait, or the thread was interrupted while it waited.
 * The message names the resource, the amount asked, the task and, for each device, who holds how
 * much of it or that it failed. Thrown from {@code open()}, it fails the task, and Flink's restart
 * strategy tries again.
 */
@PublicEvolving
public final class DeviceLeaseException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String resource;

    DeviceLeaseException(String resource, String message, Throwable cause) {
        super(message, cause);
        this.resource = resource;
    }

    /** The external resource name, for example {@code gpu}. */
    public String resource() {
        return resource;
    }
}
