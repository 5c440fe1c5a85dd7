package io.flinkdevices.sdk.process;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.config.DriverParams;

import org.apache.flink.annotation.PublicEvolving;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Finds a device tool as a TaskManager would: a configured path is checked (it must be an
 * executable regular file), a bare name is looked up on the TaskManager's own {@code PATH}.
 *
 * <pre>{@code
 * Path smi = Executables.locate(Path.of("amd-smi"), environment, params.fullKey("amd-smi.path"),
 *         "install ROCm's amd-smi");
 * ExternalCommand.of(smi, List.of("static", "--json"), timeout, params.fullKey("amd-smi.path")).run();
 * }</pre>
 */
@PublicEvolving
public final class Executables {

    private Executables() {}

    /**
     * The program to run.
     *
     * @param program a path (absolute, as the driver's factory requires) or a bare name
     * @param environment the TaskManager's environment, whose {@code PATH} is searched
     * @param key the full config key that sets the path, named in every error
     * @param remedy what the operator should do when a bare name is not found, for example
     *     {@code install ROCm's amd-smi}
     * @throws DeviceDriverException naming the key and the path (or the searched {@code PATH})
     *     when the program is missing, not a regular file or not executable
     */
    public static Path locate(Path program, Map<String, String> environment, String key, String remedy)
            throws DeviceDriverException {
        if (program.getParent() != null || program.isAbsolute()) {
            DriverParams.requireFile(key, program, DriverParams.PathCheck.EXECUTABLE);
            return program;
        }
        String path = environment.getOrDefault("PATH", "");
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir).resolve(program);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        String shown = path.length() > 300 ? path.substring(0, 300) + "..." : path;
        throw new DeviceDriverException(
                program + " is not on the TaskManager's PATH (" + shown + "); " + remedy + " or set " + key);
    }
}
