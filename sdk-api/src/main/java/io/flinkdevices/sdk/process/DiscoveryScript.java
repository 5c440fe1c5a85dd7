package io.flinkdevices.sdk.process;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.config.DriverParams;

import org.apache.flink.annotation.PublicEvolving;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A discovery script run under the contract of Flink's GPU plugin: {@code <script> <amount>
 * <args...>}; the first line of stdout lists device ids separated by commas, blank entries are
 * ignored; a non-zero exit is a failure.
 *
 * <p>Unlike Flink's runner it passes arguments as a list (paths with spaces work), kills the
 * script and all its children at a configurable timeout, drains stdout and stderr concurrently,
 * and puts the tail of stderr (or, when stderr is empty, the start of stdout) into every error.
 * Scripts written for Flink's GPU plugin, Flink's own {@code nvidia-gpu-discovery.sh} included,
 * run unchanged.
 */
@PublicEvolving
public final class DiscoveryScript {

    /** Flink's GPU plugin kills a discovery script after this long; so do we by default. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

    private static final int STDOUT_IN_ERROR = 1024;

    private final Path script;
    private final List<String> args;
    private final Duration timeout;
    private final String configKey;
    private final Map<String, String> environment;

    private DiscoveryScript(
            Path script,
            List<String> args,
            Duration timeout,
            String configKey,
            Map<String, String> environment) {
        this.script = script;
        this.args = List.copyOf(args);
        this.timeout = timeout;
        this.configKey = configKey;
        this.environment = Map.copyOf(environment);
    }

    /**
     * A discovery script.
     *
     * @param script the executable
     * @param args arguments passed after the amount, one list entry per argument
     * @param timeout kill the script and its children after this long
     * @param configKey the full key that configured the script, named in every error
     * @throws IllegalArgumentException when the timeout is not positive
     */
    public static DiscoveryScript of(
            Path script, List<String> args, Duration timeout, String configKey) {
        Objects.requireNonNull(script, "script");
        Objects.requireNonNull(args, "args");
        Objects.requireNonNull(configKey, "configKey");
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException(
                    configKey + ": the discovery script timeout must be positive but is " + timeout);
        }
        return new DiscoveryScript(script, args, timeout, configKey, Map.of());
    }

    /**
     * The same script run with extra environment variables (for example a {@code PATH} that
     * finds a vendor tool), added to those given by earlier calls.
     */
    public DiscoveryScript withEnvironment(Map<String, String> env) {
        Map<String, String> merged = new HashMap<>(environment);
        merged.putAll(env);
        return new DiscoveryScript(script, args, timeout, configKey, merged);
    }

    /**
     * Runs the script for {@code amount} devices and returns the ids it printed, in order, with
     * blank entries dropped.
     *
     * @throws DeviceDriverException naming the key and script, with the stderr tail, when the
     *     script is missing or not executable, exits non-zero, hangs, or prints no id, and when
     *     {@code amount} is not positive
     */
    public List<String> discover(long amount) throws DeviceDriverException {
        if (amount < 1) {
            throw new DeviceDriverException(
                    configKey + ": the amount of devices must be positive but is " + amount);
        }
        Optional<String> problem = DriverParams.fileProblem(script, DriverParams.PathCheck.EXECUTABLE);
        if (problem.isPresent()) {
            throw new DeviceDriverException(
                    configKey + ": discovery script: " + problem.get().replace("expected an executable file", "expected an executable discovery script"));
        }
        List<String> argv = new ArrayList<>();
        argv.add(Long.toString(amount));
        argv.addAll(args);
        ExternalCommand.Result result =
                ExternalCommand.of(script, argv, timeout, configKey)
                        .withEnvironment(environment)
                        .run();
        if (result.exitCode() != 0) {
            throw new DeviceDriverException(
                    configKey
                            + ": discovery script "
                            + script
                            + " exited with code "
                            + result.exitCode()
                            + outputSuffix(result));
        }
        if (result.stdoutTruncated()) {
            throw new DeviceDriverException(
                    configKey
                            + ": discovery script "
                            + script
                            + " printed more than "
                            + ExternalCommand.STDOUT_LIMIT_BYTES / (1024 * 1024)
                            + " MiB on stdout (the limit of what is read); expected one line of"
                            + " comma-separated ids");
        }
        String firstLine = result.stdout().lines().findFirst().orElse("");
        List<String> ids = parseIds(firstLine);
        if (ids.isEmpty()) {
            throw new DeviceDriverException(
                    configKey
                            + ": discovery script "
                            + script
                            + " printed no device id (expected a first line of comma-separated"
                            + " ids)"
                            + outputSuffix(result));
        }
        return ids;
    }

    /**
     * The stderr tail, or the start of stdout when stderr is empty: Flink's own scripts print
     * their reason ("Could not get enough GPU resources.") on stdout.
     */
    private static String outputSuffix(ExternalCommand.Result result) {
        String stderr = ExternalCommand.stderrSuffix(result.stderrTail());
        if (!stderr.isEmpty()) {
            return stderr;
        }
        String stdout = result.stdout().strip();
        if (stdout.isEmpty()) {
            return "";
        }
        return "; stdout: "
                + (stdout.length() > STDOUT_IN_ERROR
                        ? stdout.substring(0, STDOUT_IN_ERROR) + "..."
                        : stdout);
    }

    /** Splits one output line of the contract into ids, dropping blank entries. */
    public static List<String> parseIds(String line) {
        List<String> ids = new ArrayList<>();
        for (String part : line.split(",")) {
            String id = part.strip();
            if (!id.isEmpty()) {
                ids.add(id);
            }
        }
        return ids;
    }
}
