package io.flinkdevices.sdk.host.internal;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.internal.OsReason;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The errors of one sysfs reader: each starts with the config key that set the root and the
 * root ({@code external-resource.gpu.param.sysfs.root (/sys): ...}), then the path, what was
 * expected and the operating system's reason.
 */
public final class SysfsErrors {

    private final String rootKey;
    private final Path root;

    /** Errors of the reader of {@code root}, which {@code rootKey} set. */
    public SysfsErrors(String rootKey, Path root) {
        this.rootKey = rootKey;
        this.root = root;
    }

    /** {@code <rootKey> (<root>): <message>}. */
    public DeviceDriverException error(String message) {
        return new DeviceDriverException(rootKey + " (" + root + "): " + message);
    }

    /** {@code <rootKey> (<root>): <message>}, caused by {@code cause}. */
    public DeviceDriverException error(String message, Throwable cause) {
        return new DeviceDriverException(rootKey + " (" + root + "): " + message, cause);
    }

    /** {@code <rootKey> (<root>): <what>: <OS reason>; expected <expected>}. */
    public DeviceDriverException failure(String what, IOException e, String expected) {
        return error(what + ": " + OsReason.of(e) + "; expected " + expected, e);
    }

    /** {@code <where> is '<value>'; expected a whole number from <min> to <max>}. */
    public DeviceDriverException outOfRange(String where, String value, long min, long max) {
        return error(where + " is '" + abbreviate(value.strip()) + "'; expected a whole number from " + min + " to " + max);
    }

    /** {@code <where> is '<value>'; expected <expected>}. */
    public DeviceDriverException notA(String where, String value, String expected) {
        return error(where + " is '" + abbreviate(value) + "'; expected " + expected);
    }

    /** At most 80 characters of a value, control characters shown as {@code ?}. */
    public static String abbreviate(String s) {
        String clean = s.replaceAll("\\p{Cntrl}", "?");
        return clean.length() > 80 ? clean.substring(0, 80) + "..." : clean;
    }
}
