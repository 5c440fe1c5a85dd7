package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.internal.NearMiss;

import org.apache.flink.util.TimeUtils;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns what a driver says is wrong into what to change: a key and a value, a folder to create, a
 * file to install or make executable. The texts are those of sdk-api's {@code DriverParams} and
 * {@code CoordinationParams}; a driver's own advice after a {@code ;} is taken as it is.
 */
final class Fixes {

    private static final Pattern DID_YOU_MEAN = Pattern.compile("did you mean ([^\\s?]+)\\?");
    private static final Pattern GOT = Pattern.compile("but got '([^']*)'");
    private static final Pattern AT_LEAST = Pattern.compile("^must be at least (-?\\d+) but is");
    private static final Pattern ONE_OF = Pattern.compile("^expected one of (.+) but got '([^']*)'");
    private static final Pattern FOLDER_MISSING = Pattern.compile("^folder (/\\S*) does not exist");
    private static final Pattern NO_SUCH_FILE =
            Pattern.compile("^no such file (or folder )?(\\S+); expected (an executable)?");
    private static final Pattern NOT_EXECUTABLE = Pattern.compile("^file (\\S+) is not executable");
    private static final Pattern NOT_READABLE = Pattern.compile("^file (\\S+) is not readable");
    private static final Pattern IS_FOLDER = Pattern.compile("^(\\S+) is a folder(;|,) expected");
    private static final Pattern SYMLINK = Pattern.compile("^(\\S+) is a symbolic link");
    private static final Pattern EXAMPLE = Pattern.compile("e\\.g\\. ([^\\s,;()]+)");
    private static final Pattern NUMBER = Pattern.compile("(\\d+(\\.\\d+)?)");
    private static final Pattern DURATION_RANGE = Pattern.compile("from (.+?) to (.+?) but got");
    private static final Pattern LIBRARY = Pattern.compile("(lib[\\w.+-]*\\.so(\\.\\d+)*)");
    private static final Pattern MISSING_LIBRARY =
            Pattern.compile("(lib[\\w.+-]*\\.so(\\.\\d+)*): cannot open shared object file");
    private static final Pattern CLASS = Pattern.compile("([a-zA-Z_$][\\w$]*([./][a-zA-Z_$][\\w$]*)+)");
    private static final List<String> IMPERATIVES =
            List.of(
                    "set ", "write ", "remove ", "use ", "install ", "create ", "add ", "turn ",
                    "make ", "rename ", "chmod ");

    private Fixes() {}

    /** What to change for {@code problem}, which a factory reported for {@code key}. */
    static String forParam(String key, String problem) {
        Matcher m = DID_YOU_MEAN.matcher(problem);
        if (m.find()) {
            return "rename it to " + m.group(1);
        }
        if (problem.startsWith("unknown parameter")) {
            return "remove it; the driver reads no such parameter";
        }
        Optional<String> own = driversOwnAdvice(problem);
        if (own.isPresent()) {
            return own.get();
        }
        if ((m = FOLDER_MISSING.matcher(problem)).find()) {
            return "create folder "
                    + m.group(1)
                    + " on every TaskManager host (mkdir -p "
                    + m.group(1)
                    + "), or set "
                    + key
                    + " to a file in a folder that exists there";
        }
        if ((m = NO_SUCH_FILE.matcher(problem)).find()) {
            Path path = Path.of(m.group(2));
            return m.group(3) != null
                    ? "install "
                            + path.getFileName()
                            + " at "
                            + path
                            + " on every TaskManager host, or set "
                            + key
                            + " to where it is installed there (command -v "
                            + path.getFileName()
                            + " shows it)"
                    : "create " + path + " on every TaskManager host, or set " + key + " to a path that exists there";
        }
        if ((m = NOT_EXECUTABLE.matcher(problem)).find()) {
            return "make it executable on every TaskManager host: chmod +x " + m.group(1);
        }
        if ((m = NOT_READABLE.matcher(problem)).find()) {
            return "let the TaskManager's user read it: chmod a+r " + m.group(1);
        }
        if ((m = IS_FOLDER.matcher(problem)).find()) {
            return "set " + key + " to a file inside " + m.group(1) + ", not the folder itself";
        }
        if ((m = SYMLINK.matcher(problem)).find()) {
            return "set " + key + " to the file the link points to (readlink -f " + m.group(1) + ")";
        }
        if ((m = AT_LEAST.matcher(problem)).find()) {
            return "set it to " + m.group(1) + " or more";
        }
        if ((m = ONE_OF.matcher(problem)).find()) {
            List<String> options = Arrays.asList(m.group(1).split(",\\s*"));
            Optional<String> near = NearMiss.closest(m.group(2).strip(), options, 3);
            return near.map(n -> "set it to " + n)
                    .orElse("set it to one of " + String.join(", ", options));
        }
        if (problem.startsWith("expected true or false")) {
            return "set it to true or false";
        }
        if (problem.startsWith("expected a whole number")) {
            return "set it to a whole number" + number(problem).map(n -> ": " + n).orElse(", such as 1");
        }
        if (problem.startsWith("expected a duration") || problem.startsWith("expected a positive duration")) {
            return "set it to " + durationFor(problem) + " (Flink's duration syntax: 500 ms, 10 s, 2 min)";
        }
        if (problem.startsWith("expected an absolute path")) {
            Matcher got = GOT.matcher(problem);
            String name = got.find() ? Path.of(got.group(1)).getFileName().toString() : "file";
            return "set it to an absolute path, the same on every TaskManager host, such as /tmp/" + name;
        }
        if (problem.startsWith("expected a path but the value is empty")) {
            return "remove " + key + " for the driver's default, or set it to an absolute path";
        }
        if (problem.startsWith("is required")) {
            return "add " + key + example(problem).map(v -> ": " + v).orElse("") + " (the driver has no default for it)";
        }
        return "change " + key + " as the problem says; if it does not say to what, the driver's"
                + " author should make it do so";
    }

    /**
     * What to do about a factory or driver that failed with {@code failure} (no config problem):
     * for a missing native library or class, where to put it.
     */
    static Optional<String> forFailure(Throwable failure, Optional<Path> pluginFolder) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String message = t.getMessage() == null ? "" : t.getMessage();
            if (t instanceof UnsatisfiedLinkError) {
                // The library the dynamic linker could not open, not the one that needed it: a
                // binding's own library (JCuda's bundled libJCudaDriver-...so) loads and then
                // misses the vendor's (libcuda.so.1, the NVIDIA driver's)
                Matcher missing = MISSING_LIBRARY.matcher(message);
                Matcher lib = LIBRARY.matcher(message);
                String name = missing.find() ? missing.group(1) : lib.find() ? lib.group(1) : "the native library it names";
                return Optional.of(
                        "install "
                                + name
                                + " on every TaskManager host where its dynamic loader finds it"
                                + " (ldconfig -p | grep "
                                + name.replaceAll("\\.so.*", "")
                                + " lists it)");
            }
            if (t instanceof NoClassDefFoundError || t instanceof ClassNotFoundException) {
                Matcher c = CLASS.matcher(message);
                String name = c.find() ? c.group(1).replace('/', '.') : "the class it names";
                return Optional.of(
                        "put the jar that holds "
                                + name
                                + " into "
                                + pluginFolder.map(Path::toString).orElse("the driver's plugin folder")
                                + " (a plugin jar bundles every dependency except Flink's)");
            }
        }
        return Optional.empty();
    }

    /**
     * What to do about a call that ran past {@code --timeout}: a longer limit if it is only slow,
     * else where to see what it waits for.
     */
    static String forTimeout(String timeout, String thread) {
        return "if it is only slow, run doctor with a --timeout longer than "
                + timeout
                + "; if it hangs, see what it waits for (a device tool, a lock, the network) in"
                + " jstack <pid of flink-devices>, thread "
                + thread
                + ", while it runs";
    }

    /** The driver's own advice: its last clause after {@code ;} when it says what to do. */
    private static Optional<String> driversOwnAdvice(String problem) {
        int semicolon = problem.lastIndexOf("; ");
        if (semicolon < 0) {
            return Optional.empty();
        }
        String advice = problem.substring(semicolon + 2).strip();
        for (String verb : IMPERATIVES) {
            if (advice.startsWith(verb)) {
                return Optional.of(advice);
            }
        }
        return Optional.empty();
    }

    /**
     * A duration that {@code DriverParams} accepts for a duration problem: the longest or shortest
     * accepted when the value was out of range, else the value's number in seconds where that is
     * in range, else 10 s.
     */
    private static String durationFor(String problem) {
        Duration min = DriverParams.MIN_DURATION;
        Duration max = DriverParams.MAX_DURATION;
        Matcher range = DURATION_RANGE.matcher(problem);
        boolean ranged = range.find();
        String shortest = ranged ? range.group(1) : TimeUtils.formatWithHighestUnit(min);
        String longest = (ranged ? range.group(2) : TimeUtils.formatWithHighestUnit(max)) + " or less";
        Matcher got = GOT.matcher(problem);
        if (got.find()) {
            try {
                Duration d = TimeUtils.parseDuration(got.group(1));
                if (d.compareTo(max) > 0) {
                    return longest;
                }
                if (!d.isNegative() && !d.isZero() && d.compareTo(min) < 0) {
                    return shortest + " or more";
                }
            } catch (RuntimeException notADuration) {
                // no unit, an unknown one, or a number too large for a Duration: its number below
            }
        }
        Optional<String> seconds = number(problem).filter(n -> !n.matches("0+"));
        if (seconds.isEmpty()) {
            return "10 s";
        }
        try {
            return Duration.ofSeconds(Long.parseLong(seconds.get())).compareTo(max) > 0 ? longest : seconds.get() + " s";
        } catch (NumberFormatException | ArithmeticException tooLarge) {
            return longest;
        }
    }

    private static Optional<String> number(String problem) {
        Matcher got = GOT.matcher(problem);
        if (!got.find()) {
            return Optional.empty();
        }
        Matcher n = NUMBER.matcher(got.group(1));
        return n.find() ? Optional.of(n.group(1).replaceAll("\\.\\d+$", "")) : Optional.empty();
    }

    private static Optional<String> example(String problem) {
        Matcher e = EXAMPLE.matcher(problem);
        return e.find() ? Optional.of(e.group(1)) : Optional.empty();
    }
}
