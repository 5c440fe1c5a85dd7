package io.flinkdevices.sdk.config;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.config.internal.DurationText;
import io.flinkdevices.sdk.config.internal.EnumNames;
import io.flinkdevices.sdk.config.internal.FileChecks;
import io.flinkdevices.sdk.internal.NearMiss;
import io.flinkdevices.sdk.internal.OsReason;
import io.flinkdevices.sdk.internal.ParamPrefix;
import io.flinkdevices.sdk.internal.Visible;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;

import java.io.IOException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Typed, validating reader of the parameters a driver factory receives.
 *
 * <p>Flink hands a factory only the keys under {@code external-resource.<name>.param.}, prefix
 * stripped. A factory reads every parameter it knows through this class, then calls {@link
 * #validate()}: every malformed value, failed check and unknown key (with the nearest known key as
 * a suggestion) is reported in one {@link DriverConfigException}, each problem naming the full
 * key. A read that fails returns the default, so reading can go on and collect more problems.
 *
 * <pre>{@code
 * DriverParams p = DriverParams.of(config);
 * Path smi = p.path("nvidia-smi.path", Path.of("nvidia-smi"), PathCheck.NONE);
 * Duration timeout = p.duration("timeout", Duration.ofSeconds(10));
 * p.validate();
 * }</pre>
 */
@PublicEvolving
public final class DriverParams {

    /** What must hold of a path parameter's file. */
    @PublicEvolving
    public enum PathCheck {
        /** Nothing is checked. */
        NONE,
        /** The file or folder exists. */
        EXISTS,
        /** The file exists and is a regular file the process may read. */
        READABLE_FILE,
        /** The file exists and the process may execute it. */
        EXECUTABLE
    }

    private final Configuration config;
    private final String keyPrefix;
    private final Set<String> known = new LinkedHashSet<>();
    // A set: reading a bad key twice must not report it twice.
    private final Set<String> problems = new LinkedHashSet<>();

    private DriverParams(Configuration config, String keyPrefix) {
        this.config = config;
        this.keyPrefix = keyPrefix;
    }

    /**
     * Reads the parameters a factory received from Flink. The full key prefix is recovered from
     * Flink's configuration view where Flink allows it, and is {@code
     * external-resource.<resource>.param.} otherwise.
     */
    public static DriverParams of(Configuration config) {
        return new DriverParams(config, ParamPrefix.of(config));
    }

    /** Reads parameters of a resource whose name the caller knows, e.g. in the CLI or tests. */
    public static DriverParams of(Configuration config, String resourceName) {
        return new DriverParams(config, "external-resource." + resourceName + ".param.");
    }

    /** The full name of {@code key} as an operator writes it in {@code config.yaml}. */
    public String fullKey(String key) {
        return keyPrefix + key;
    }

    /** The prefix every key of this factory has in the operator's configuration. */
    public String keyPrefix() {
        return keyPrefix;
    }

    /**
     * The full key of the resource's amount, {@code external-resource.<name>.amount}, for messages
     * that tell the operator to lower it (the prefix itself when it is not Flink's usual one).
     */
    public String amountKey() {
        return keyPrefix.endsWith("param.")
                ? keyPrefix.substring(0, keyPrefix.length() - "param.".length()) + "amount"
                : keyPrefix;
    }

    /** Whether the operator set {@code key}. Declares {@code key} as known. */
    public boolean isSet(String key) {
        known.add(key);
        return config.containsKey(key);
    }

    /** A string parameter, trimmed; {@code defaultValue} when unset. */
    public String string(String key, String defaultValue) {
        known.add(key);
        String v = raw(key);
        return v == null ? defaultValue : v;
    }

    /** A string parameter that must be set. */
    public String requiredString(String key) {
        known.add(key);
        String v = raw(key);
        if (v == null || v.isEmpty()) {
            problem(key, "is required but not set");
            return null;
        }
        return v;
    }

    /**
     * {@code value} quoted for a problem message, as this class quotes the values it refuses: at
     * most 200 characters, and the first character outside printable ASCII named ({@code '10 s'
     * (character 3 is U+00A0 NO-BREAK SPACE, which looks like a plain space but is not one)}), so
     * that a value that prints like a valid one is not left unexplained.
     */
    public static String quoted(String value) {
        return Visible.quoted(value);
    }

    /** A whole-number parameter with an inclusive lower bound. */
    public long longValue(String key, long defaultValue, long min) {
        known.add(key);
        String v = raw(key);
        if (v == null) {
            return defaultValue;
        }
        try {
            long parsed = Long.parseLong(v);
            if (parsed < min) {
                problem(key, "must be at least " + min + " but is " + parsed);
                return defaultValue;
            }
            return parsed;
        } catch (NumberFormatException e) {
            problem(key, "expected a whole number but got " + Visible.quoted(v));
            return defaultValue;
        }
    }

    /** A boolean parameter ({@code true} or {@code false}, case-insensitive). */
    public boolean bool(String key, boolean defaultValue) {
        known.add(key);
        String v = raw(key);
        if (v == null) {
            return defaultValue;
        }
        if (v.equalsIgnoreCase("true")) {
            return true;
        }
        if (v.equalsIgnoreCase("false")) {
            return false;
        }
        problem(key, "expected true or false but got " + Visible.quoted(v));
        return defaultValue;
    }

    /**
     * The shortest duration {@link #duration} accepts: a shorter wait is no wait (and reads as
     * {@code 0 ms} in every message).
     */
    public static final Duration MIN_DURATION = Duration.ofMillis(1);

    /**
     * The longest duration {@link #duration} accepts. Timeouts are counted in nanoseconds from
     * now, which overflows past about 292 years; anything beyond a day is a mistake for a
     * TaskManager that waits for it at start.
     */
    public static final Duration MAX_DURATION = Duration.ofDays(1);

    /**
     * A duration in Flink's syntax ({@code 10 s}, {@code 500ms}, {@code 1 min}) from {@link
     * #MIN_DURATION} to {@link #MAX_DURATION}; a value outside that range is a problem naming the
     * key, the value and the range.
     */
    public Duration duration(String key, Duration defaultValue) {
        known.add(key);
        String v = raw(key);
        if (v == null) {
            return defaultValue;
        }
        ConfigOption<Duration> option = ConfigOptions.key(key).durationType().noDefaultValue();
        Duration d;
        try {
            d = config.get(option);
        } catch (RuntimeException e) {
            problem(
                    key,
                    DurationText.tooLargeForDuration(v)
                            ? outOfRange(v)
                            : "expected a duration such as '10 s' or '500 ms' but got " + Visible.quoted(v));
            return defaultValue;
        }
        if (d == null || d.compareTo(MIN_DURATION) < 0 || d.compareTo(MAX_DURATION) > 0) {
            problem(key, outOfRange(v));
            return defaultValue;
        }
        return d;
    }

    private static String outOfRange(String v) {
        return DurationText.outOfRange(v, MIN_DURATION, MAX_DURATION);
    }

    /**
     * The system property that turns off the checks of files on this machine when it is {@code
     * false}: tools that render or check a TaskManager's configuration off the TaskManager host
     * (flink-devices' CLI for {@code render} and {@code doctor --no-devices}) set it, so that a path
     * that exists only on the TaskManagers is not a problem there. Drivers never set it.
     */
    public static final String HOST_PATHS_PROPERTY = "flinkdevices.check-host-paths";

    /** Whether files on this machine are checked (see {@link #HOST_PATHS_PROPERTY}). */
    public static boolean hostPathsChecked() {
        return !"false".equals(System.getProperty(HOST_PATHS_PROPERTY));
    }

    /**
     * A file path, checked as {@code check} says (unless {@link #HOST_PATHS_PROPERTY} is {@code
     * false}); {@code defaultValue} when unset.
     */
    public Path path(String key, Path defaultValue, PathCheck check) {
        known.add(key);
        String v = raw(key);
        if (v == null) {
            return defaultValue;
        }
        if (v.isEmpty()) {
            // Path.of("") is the working directory, which would pass EXISTS silently.
            problem(key, "expected a path but the value is empty");
            return defaultValue;
        }
        Optional<Path> p = validPath(key, v);
        if (p.isPresent() && hostPathsChecked()) {
            fileProblem(p.get(), check).ifPresent(why -> problem(key, why));
        }
        return p.orElse(defaultValue);
    }

    /**
     * {@code value} of {@code key} as a path; empty, with the problem {@code is not a valid path}
     * recorded against the key, where it cannot be one (a NUL character, say): for a path a driver
     * reads as a string, rather than let {@code Path.of} throw without naming the key.
     */
    public Optional<Path> validPath(String key, String value) {
        try {
            return Optional.of(Path.of(value));
        } catch (InvalidPathException e) {
            problem(key, "is not a valid path: '" + value + "' (" + e.getReason() + ")");
            return Optional.empty();
        }
    }

    /**
     * Throws {@code <what>: <}{@link #fileProblem}{@code >} when {@code path} does not pass {@code
     * check}, for checks made after the factory (a program or bitstream looked at again when it is
     * used).
     *
     * @param what the full key, or what names the file in the message
     */
    public static void requireFile(String what, Path path, PathCheck check) throws DeviceDriverException {
        Optional<String> problem = fileProblem(path, check);
        if (problem.isPresent()) {
            throw new DeviceDriverException(what + ": " + problem.get());
        }
    }

    /**
     * Why {@code path} does not pass {@code check}, as one phrase an operator can act on: the path,
     * what is wrong with it, what was expected, and the operating system's reason where it gave one
     * ({@code no such file /opt/x; expected an executable file (No such file or directory)}, {@code
     * /opt/x is a folder; expected an executable file}). Empty when it passes. Callers put the full
     * key in front.
     */
    public static Optional<String> fileProblem(Path path, PathCheck check) {
        switch (check) {
            case EXISTS:
                return FileChecks.problem(path, FileChecks.Wanted.ANYTHING);
            case READABLE_FILE:
                return FileChecks.problem(path, FileChecks.Wanted.READABLE_FILE);
            case EXECUTABLE:
                return FileChecks.problem(path, FileChecks.Wanted.EXECUTABLE_FILE);
            default:
                return Optional.empty();
        }
    }

    /** The operating system's words for a failed file access ({@code Not a directory}, ...). */
    public static String osReason(IOException e) {
        return OsReason.of(e);
    }

    /**
     * An enum parameter matched case-insensitively, with {@code -} and {@code _} equivalent, so
     * {@code nvidia-smi} selects {@code NVIDIA_SMI}.
     */
    public <E extends Enum<E>> E enumValue(String key, Class<E> type, E defaultValue) {
        known.add(key);
        String v = raw(key);
        if (v == null) {
            return defaultValue;
        }
        Optional<E> match = EnumNames.match(type, v);
        if (match.isEmpty()) {
            problem(key, EnumNames.expectedOneOf(type, v));
        }
        return match.orElse(defaultValue);
    }

    /**
     * A list parameter: a YAML list, or one string with entries separated by {@code ;} or {@code
     * ,}; blank entries are dropped.
     */
    public List<String> list(String key, List<String> defaultValue) {
        known.add(key);
        if (!config.containsKey(key)) {
            return defaultValue;
        }
        try {
            List<String> values =
                    config.get(ConfigOptions.key(key).stringType().asList().noDefaultValue());
            List<String> out = new ArrayList<>();
            for (String v : values) {
                for (String part : v.split("[;,]")) {
                    if (!part.isBlank()) {
                        out.add(part.trim());
                    }
                }
            }
            return List.copyOf(out);
        } catch (RuntimeException e) {
            problem(key, "expected a list but got '" + raw(key) + "'");
            return defaultValue;
        }
    }

    /**
     * Records a problem the factory found itself (a check across keys, say), naming the key.
     */
    public void problem(String key, String message) {
        problems.add(fullKey(key) + ": " + message);
    }

    /** Declares keys as known without reading them, e.g. keys another component reads. */
    public void declare(String... keys) {
        known.addAll(Arrays.asList(keys));
    }

    /** The keys declared so far, in declaration order. */
    public Set<String> knownKeys() {
        return Collections.unmodifiableSet(new LinkedHashSet<>(known));
    }

    /** The problems found so far, each naming its full key. */
    public List<String> problems() {
        List<String> all = new ArrayList<>(problems);
        for (String key : new TreeSet<>(config.keySet())) {
            if (!known.contains(key)) {
                String near = nearest(key);
                all.add(
                        fullKey(key)
                                + ": unknown parameter"
                                + (near == null
                                        ? "; known parameters are " + new TreeSet<>(known)
                                        : "; did you mean " + fullKey(near) + "?"));
            }
        }
        return all;
    }

    /**
     * Fails with every problem found, each naming its full key, unknown keys included. Call it
     * after every parameter has been read. The exception carries the keys read or declared so far
     * ({@link DriverConfigException#knownKeys()}).
     */
    public void validate() throws DriverConfigException {
        List<String> all = problems();
        if (!all.isEmpty()) {
            throw new DriverConfigException(all, known);
        }
    }

    private String raw(String key) {
        if (!config.containsKey(key)) {
            return null;
        }
        String v = config.getString(key, null);
        return v == null ? null : v.trim();
    }

    private String nearest(String key) {
        return NearMiss.closest(key, known, Math.max(2, key.length() / 4)).orElse(null);
    }
}
