package io.flinkdevices.sdk;

import org.apache.flink.annotation.PublicEvolving;

/**
 * The one exception type of the SDK: a driver could not be created or could not hand out devices.
 *
 * <p>It is a checked {@link Exception} on purpose. Flink's {@code ExternalResourceUtils} catches
 * exceptions from factories and drivers, logs them and drops the resource, while an {@link Error}
 * escapes and stops the TaskManager. Every failure of a driver built on this SDK is therefore
 * reported as a {@code DeviceDriverException} whose message is the operator's whole clue: it names
 * the configuration key, file or program concerned and what was expected.
 */
@PublicEvolving
public class DeviceDriverException extends Exception {

    private static final long serialVersionUID = 1L;

    /** Creates an exception with a message that names what went wrong and where. */
    public DeviceDriverException(String message) {
        super(message);
    }

    /** Creates an exception with a message and the failure that caused it. */
    public DeviceDriverException(String message, Throwable cause) {
        super(message, cause);
    }
}
