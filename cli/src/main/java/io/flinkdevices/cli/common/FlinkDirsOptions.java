package io.flinkdevices.cli.common;

import io.flinkdevices.cli.flink.FlinkSetup;
import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.host.HostFiles;

import org.apache.flink.configuration.ConfigConstants;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;

import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * The options that say where a Flink installation keeps its configuration and plugins, shared by
 * every subcommand that reads them.
 */
public final class FlinkDirsOptions {

    @Option(
            names = "--conf-dir",
            paramLabel = "DIR",
            required = true,
            description = "Flink configuration directory (the one holding config.yaml).")
    Path confDir;

    @Option(
            names = "--plugins-dir",
            paramLabel = "DIR",
            description = {
                "Flink plugins directory.",
                "Default: $"
                        + ConfigConstants.ENV_FLINK_PLUGINS_DIR
                        + " if set, else the plugins directory beside <conf-dir>."
            })
    Path pluginsDir;

    /** The largest {@code config.yaml} read; Flink's default one is about 15 KiB. */
    static final int MAX_CONFIG_BYTES = 16 << 20;

    /**
     * Loads the configuration with Flink's own loader and decides the plugins directory.
     *
     * @throws ParameterException when the configuration cannot be read or an explicitly given
     *     plugins directory does not exist: both are mistakes in the command line
     */
    public FlinkSetup resolve(Environment env, CommandLine commandLine) {
        Path conf = confDir.toAbsolutePath().normalize();
        if (!Files.isDirectory(conf)) {
            throw new ParameterException(
                    commandLine, "--conf-dir: " + conf + " is not a directory");
        }
        Path configFile = conf.resolve(GlobalConfiguration.FLINK_CONF_FILENAME);
        byte[] content = readConfigFile(configFile, commandLine);
        Configuration configuration;
        try {
            configuration = load(conf, content);
        } catch (RuntimeException e) {
            String reason = oneLine(e);
            if (Files.exists(conf.resolve("flink-conf.yaml"))
                    && !Files.exists(conf.resolve(GlobalConfiguration.FLINK_CONF_FILENAME))) {
                reason +=
                        " Flink 2.x reads config.yaml only; convert flink-conf.yaml with Flink's"
                                + " bin/migrate-config-file.sh.";
            }
            throw new ConfigFileException(
                    commandLine,
                    "--conf-dir: Flink cannot load its configuration "
                            + conf.resolve(GlobalConfiguration.FLINK_CONF_FILENAME)
                            + ": "
                            + reason,
                    e);
        }

        if (pluginsDir != null) {
            Path plugins = pluginsDir.toAbsolutePath().normalize();
            if (!Files.isDirectory(plugins)) {
                throw new ParameterException(
                        commandLine, "--plugins-dir: " + plugins + " is not a directory");
            }
            return new FlinkSetup(configuration, configFile, plugins, "--plugins-dir");
        }
        String fromEnv = env.get(ConfigConstants.ENV_FLINK_PLUGINS_DIR);
        if (fromEnv != null && !fromEnv.isBlank()) {
            return new FlinkSetup(
                    configuration,
                    configFile,
                    Path.of(fromEnv).toAbsolutePath().normalize(),
                    "$" + ConfigConstants.ENV_FLINK_PLUGINS_DIR);
        }
        Path home = conf.getParent() == null ? conf : conf.getParent();
        Path beside = home.resolve("plugins");
        return new FlinkSetup(configuration, configFile, beside, "<conf-dir>/../plugins");
    }

    /**
     * The bytes of {@code config.yaml}, read so that a FIFO there (even one put there after it was
     * looked at) is refused instead of waited on, as Flink's own loader would; null when there is
     * no such file (Flink then says so).
     */
    private static byte[] readConfigFile(Path configFile, CommandLine commandLine) {
        try {
            return HostFiles.read(configFile, MAX_CONFIG_BYTES);
        } catch (NoSuchFileException e) {
            return null;
        } catch (HostFiles.RefusedFileException e) {
            throw new ConfigFileException(
                    commandLine,
                    "--conf-dir: " + e.getMessage() + "; expected Flink's configuration file, a regular file",
                    e);
        } catch (IOException e) {
            throw new ConfigFileException(
                    commandLine, "--conf-dir: cannot read " + configFile + ": " + DriverParams.osReason(e), e);
        }
    }

    /**
     * Flink's own loader on a private copy of {@code content} (none: no {@code config.yaml}), so
     * that Flink never opens the operator's file itself; the copy's folder is named as {@code
     * conf} in Flink's messages.
     */
    private static Configuration load(Path conf, byte[] content) {
        Path copy;
        try {
            copy = Files.createTempDirectory("flink-devices-conf");
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "cannot make a private copy of it in " + System.getProperty("java.io.tmpdir") + ": "
                            + DriverParams.osReason(e),
                    e);
        }
        Path copied = copy.resolve(GlobalConfiguration.FLINK_CONF_FILENAME);
        try {
            if (content != null) {
                Files.write(copied, content);
            }
            return GlobalConfiguration.loadConfiguration(copy.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "cannot make a private copy of it in " + copy + ": " + DriverParams.osReason(e), e);
        } catch (RuntimeException e) {
            throw new CopyFailure(e, copy.toString(), conf.toString());
        } finally {
            try {
                Files.deleteIfExists(copied);
                Files.deleteIfExists(copy);
            } catch (IOException e) {
                copy.toFile().deleteOnExit();
            }
        }
    }

    /** Flink's failure on the private copy, worded as if Flink had read the operator's folder. */
    private static final class CopyFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        CopyFailure(RuntimeException flinks, String copy, String conf) {
            super(
                    String.valueOf(flinks.getMessage()).replace(copy, conf),
                    flinks.getCause() == null
                            ? null
                            : new RuntimeException(
                                    String.valueOf(flinks.getCause().getMessage()).replace(copy, conf),
                                    flinks.getCause()));
        }
    }

    /**
     * A configuration file that cannot be read: a mistake in the input, answered with one line (no
     * usage text, which says nothing about a broken file).
     */
    public static final class ConfigFileException extends ParameterException {
        private static final long serialVersionUID = 1L;

        ConfigFileException(CommandLine commandLine, String message, Throwable cause) {
            super(commandLine, message, cause);
        }
    }

    /**
     * Flink's loader failure in one line: SnakeYAML's {@code in reader, line N, column M} lines
     * become {@code at line N, column M} after the phrase they place.
     */
    static String oneLine(RuntimeException e) {
        StringBuilder all = new StringBuilder(String.valueOf(e.getMessage()));
        if (e.getCause() != null && e.getCause().getMessage() != null) {
            all.append('\n').append(e.getCause().getMessage());
        }
        java.util.List<String> parts = new java.util.ArrayList<>();
        java.util.regex.Pattern at = java.util.regex.Pattern.compile("in [^,]*, line (\\d+), column (\\d+):?");
        for (String line : all.toString().split("\\R")) {
            String l = line.strip();
            java.util.regex.Matcher m = at.matcher(l);
            if (m.matches() && !parts.isEmpty()) {
                int last = parts.size() - 1;
                parts.set(last, parts.get(last) + " at line " + m.group(1) + ", column " + m.group(2));
            } else if (!l.isEmpty() && !parts.contains(l)) {
                parts.add(l.endsWith(".") ? l.substring(0, l.length() - 1) : l);
            }
        }
        return String.join(": ", parts).replaceAll("\\s+", " ");
    }
}
