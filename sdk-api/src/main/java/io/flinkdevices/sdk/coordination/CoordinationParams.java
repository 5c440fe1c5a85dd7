package io.flinkdevices.sdk.coordination;

import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.coordination.internal.CoordinationFileCheck;
import io.flinkdevices.sdk.reference.ParamDoc;

import org.apache.flink.annotation.PublicEvolving;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The coordination settings every driver reads under the same parameter names.
 *
 * <table>
 *   <caption>Parameters, under {@code external-resource.<name>.param.}</caption>
 *   <tr><th>key</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code coordination.enabled}</td><td>{@code false}</td>
 *       <td>coordinate with the other TaskManagers of this host through a shared file</td></tr>
 *   <tr><td>{@code coordination.file}</td>
 *       <td>{@code <java.io.tmpdir>/flink-devices-<device class>.coordination}</td>
 *       <td>absolute path of the file; every TaskManager of the host must name the same one</td></tr>
 *   <tr><td>{@code coordination.lock-timeout}</td><td>{@code 10 s}</td>
 *       <td>how long an allocation waits for the file's lock before it fails</td></tr>
 *   <tr><td>{@code coordination.permissions}</td><td>{@code owner}</td>
 *       <td>{@code owner} creates the files with mode 0600, {@code group} with 0660 (TaskManagers
 *       run as different users of one group; see {@link Permissions#GROUP})</td></tr>
 * </table>
 *
 * <p>A factory reads them with {@link #read(DriverParams, String)} before it calls {@link
 * DriverParams#validate()}, so that bad values are reported with every other problem, each with
 * its full key.
 */
@PublicEvolving
public final class CoordinationParams {

    /** Parameter switching coordination on. */
    public static final String ENABLED = "coordination.enabled";

    /** Parameter naming the coordination file. */
    public static final String FILE = "coordination.file";

    /** Parameter bounding the wait for the file's lock. */
    public static final String LOCK_TIMEOUT = "coordination.lock-timeout";

    /** Parameter choosing who may read and write the files. */
    public static final String PERMISSIONS = "coordination.permissions";

    /** Every parameter this class reads. */
    public static final List<String> KEYS = List.of(ENABLED, FILE, LOCK_TIMEOUT, PERMISSIONS);

    /** The default of {@value #LOCK_TIMEOUT}. */
    public static final Duration DEFAULT_LOCK_TIMEOUT = Duration.ofSeconds(10);

    private static final Pattern DEVICE_CLASS = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

    /** Who may read and write the coordination file and its lock file. */
    @PublicEvolving
    public enum Permissions {
        /** Mode 0600: TaskManagers of the host run as one user. */
        OWNER,
        /**
         * Mode 0660: TaskManagers run as different users of one group. A new file takes the group
         * of the process that creates it, or of its folder when the folder has the setgid bit, so
         * put the file in a folder owned by that group with the setgid bit, or make that group
         * every TaskManager user's primary group. Any folder they may all write works, {@code
         * /tmp} included: the files are rewritten in place, never replaced, so a sticky folder
         * does not stop another user.
         */
        GROUP
    }

    private final boolean enabled;
    private final Path file;
    private final Duration lockTimeout;
    private final Permissions permissions;
    private final String keyPrefix;

    private CoordinationParams(
            boolean enabled,
            Path file,
            Duration lockTimeout,
            Permissions permissions,
            String keyPrefix) {
        this.enabled = enabled;
        this.file = file;
        this.lockTimeout = lockTimeout;
        this.permissions = permissions;
        this.keyPrefix = keyPrefix;
    }

    /**
     * Reads the coordination parameters. Problems (a malformed value, a relative path, a missing
     * folder or a symbolic link when coordination is enabled) are recorded in {@code params} and
     * reported by its {@link DriverParams#validate()}.
     *
     * @param params the factory's parameters
     * @param deviceClass names the id space of the devices, e.g. {@code nvidia-gpu} or {@code
     *     rdma}, and the default file; drivers whose ids could collide must use different classes
     * @throws IllegalArgumentException when {@code deviceClass} is not letters, digits, {@code .},
     *     {@code _} and {@code -}
     */
    public static CoordinationParams read(DriverParams params, String deviceClass) {
        Path defaultFile = defaultFile(deviceClass);
        boolean enabled = params.bool(ENABLED, false);
        Path file = params.path(FILE, defaultFile, DriverParams.PathCheck.NONE);
        Duration lockTimeout = params.duration(LOCK_TIMEOUT, DEFAULT_LOCK_TIMEOUT);
        Permissions permissions = params.enumValue(PERMISSIONS, Permissions.class, Permissions.OWNER);
        if (enabled) {
            checkFile(params, file);
        }
        return new CoordinationParams(enabled, file, lockTimeout, permissions, params.keyPrefix());
    }

    private static void checkFile(DriverParams params, Path file) {
        if (!file.isAbsolute()) {
            params.problem(
                    FILE,
                    "expected an absolute path (every TaskManager of the host must name the same"
                            + " file) but got '"
                            + file
                            + "'");
            return;
        }
        Path parent = file.getParent();
        if (!DriverParams.hostPathsChecked()) {
            // checked off the TaskManager host: the file lives on the TaskManagers
            return;
        }
        if (parent == null || !Files.isDirectory(parent)) {
            params.problem(FILE, "folder " + parent + " does not exist");
        } else {
            // the same check as the CLI's quarantine list and clear: one set of refusals, one wording
            for (String problem : CoordinationFileCheck.problems(file)) {
                params.problem(FILE, problem);
            }
        }
    }

    /** Enabled coordination through {@code file}, with default lock timeout and permissions. */
    public static CoordinationParams of(Path file) {
        Objects.requireNonNull(file, "file");
        return new CoordinationParams(
                true, file.toAbsolutePath(), DEFAULT_LOCK_TIMEOUT, Permissions.OWNER, "");
    }

    /**
     * The parameters {@link #read} reads, for a factory's {@link
     * io.flinkdevices.sdk.reference.DocumentedDriver#parameters()}.
     *
     * @param deviceClass the device class the factory passes to {@link #read}
     */
    public static List<ParamDoc> docs(String deviceClass) {
        return List.of(
                ParamDoc.of(ENABLED, "false", "`true`: allocate through a file shared with the other TaskManagers of this host, so that no device is handed to two of them"),
                ParamDoc.of(
                        FILE,
                        "`<java.io.tmpdir>/flink-devices-" + deviceClass + ".coordination`",
                        "absolute path of that file; every TaskManager of the host must name the same one"),
                ParamDoc.of(
                        LOCK_TIMEOUT,
                        ParamDoc.duration(DEFAULT_LOCK_TIMEOUT),
                        "how long an allocation waits for the file's lock before it fails naming the holder; 1 ms to 1 d"),
                ParamDoc.of(
                        PERMISSIONS,
                        "`owner`",
                        "`owner`: files created with mode 0600 (TaskManagers run as one user); `group`: 0660 (different users of one group)"));
    }

    /** The default coordination file of a device class: {@code <java.io.tmpdir>/flink-devices-<class>.coordination}. */
    public static Path defaultFile(String deviceClass) {
        if (deviceClass == null || !DEVICE_CLASS.matcher(deviceClass).matches()) {
            throw new IllegalArgumentException(
                    "device class must be letters, digits, '.', '_' and '-' but is '"
                            + deviceClass
                            + "'");
        }
        return Path.of(System.getProperty("java.io.tmpdir"))
                .toAbsolutePath()
                .resolve("flink-devices-" + deviceClass + ".coordination");
    }

    /** The same settings with another lock timeout. */
    public CoordinationParams withLockTimeout(Duration timeout) {
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("lock timeout must be positive but is " + timeout);
        }
        return new CoordinationParams(enabled, file, timeout, permissions, keyPrefix);
    }

    /** The same settings with other permissions. */
    public CoordinationParams withPermissions(Permissions permissions) {
        return new CoordinationParams(
                enabled, file, lockTimeout, Objects.requireNonNull(permissions), keyPrefix);
    }

    /** Whether the operator enabled coordination ({@value #ENABLED}). */
    public boolean enabled() {
        return enabled;
    }

    /** The coordination file ({@value #FILE}); its lock is the sibling {@code <file>.lock}. */
    public Path file() {
        return file;
    }

    /** The bound on waiting for the lock ({@value #LOCK_TIMEOUT}). */
    public Duration lockTimeout() {
        return lockTimeout;
    }

    /** Who may read and write the files ({@value #PERMISSIONS}). */
    public Permissions permissions() {
        return permissions;
    }

    /**
     * The full name of one of these keys as the operator writes it, e.g. {@code
     * external-resource.gpu.param.coordination.file}; the bare key for settings made with {@link
     * #of(Path)}. Coordination errors start with it.
     */
    public String fullKey(String key) {
        return keyPrefix + key;
    }

    @Override
    public String toString() {
        return "CoordinationParams{enabled="
                + enabled
                + ", file="
                + file
                + ", lockTimeout="
                + lockTimeout
                + ", permissions="
                + permissions
                + "}";
    }
}
