package io.flinkdevices.sdk.process;

import io.flinkdevices.sdk.DeviceDriverException;

import org.apache.flink.annotation.PublicEvolving;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A discovery script run under the contract of Flink's GPU plugin: {@code <script> <amount>
 * <args...>}; the first line of stdout lists device ids separated by commas, blank entries are
 * ignored; a non-zero exit is a failure.
 *
 * <p>Unlike Flink's runner it passes arguments as a list (paths with spaces work), kills the
 * script and all its children at a configurable timeout, drains stdout and stderr concurrently,
 * and puts the tail of stderr into every error. Scripts written for Flink's GPU plugin, Flink's
 * own {@code nvidia-gpu-discovery.sh} included, run unchanged.
 */
@PublicEvolving
public final class DiscoveryScript {

    /** Flink's GPU plugin kills a discovery script after this long; so do we by default. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

    private final Path script;
    private final List<String> args;
    private final Duration timeout;
    private final String configKey;

    private DiscoveryScript(Path script, List<String> args, Duration timeout, String configKey) {
        this.script = script;
        this.args = List.copyOf(args);
        this.timeout = timeout;
        this.configKey = configKey;
    }

    /**
     * A discovery script.
     *
     * @param script the executable
     * @param args arguments passed after the amount, one list entry per argument
     * @param timeout kill the script and its children after this long
     * @param configKey the full key that configured the script, named in every error
     */
    public static DiscoveryScript of(
            Path script, List<String> args, Duration timeout, String configKey) {
        return new DiscoveryScript(script, args, timeout, configKey);
    }

    /**
     * Runs the script for {@code amount} devices and returns the ids it printed, in order, with
     * blank entries dropped.
     *
     * @throws DeviceDriverException naming the key and script, with the stderr tail, when the
     *     script is missing or not executable, exits non-zero, hangs, or prints no id
     */
    public List<String> discover(long amount) throws DeviceDriverException {
        if (!Files.isRegularFile(script)) {
            throw new DeviceDriverException(configKey + ": no such discovery script " + script);
        }
        if (!Files.isExecutable(script)) {
            throw new DeviceDriverException(
                    configKey + ": discovery script " + script + " is not executable (chmod +x)");
        }
        List<String> argv = new ArrayList<>();
        argv.add(Long.toString(amount));
        argv.addAll(args);
        ExternalCommand.Result result =
                ExternalCommand.of(script, argv, timeout, configKey).run();
        if (result.exitCode() != 0) {
            throw new DeviceDriverException(
                    configKey
                            + ": discovery script "
                            + script
                            + " exited with code "
                            + result.exitCode()
                            + ExternalCommand.stderrSuffix(result.stderrTail()));
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
                            + ExternalCommand.stderrSuffix(result.stderrTail()));
        }
        return ids;
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
