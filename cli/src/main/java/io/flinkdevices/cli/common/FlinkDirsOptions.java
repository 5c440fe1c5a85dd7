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

    /** Where the configuration directory comes from without {@code --conf-dir}, as Flink's scripts read it. */
    public static final String ENV_FLINK_CONF_DIR = ConfigConstants.ENV_FLINK_CONF_DIR;

    /** The Flink installation; its {@code conf/} is the configuration directory without the others. */
    public static final String ENV_FLINK_HOME = ConfigConstants.ENV_FLINK_HOME_DIR;

    @Option(
            names = "--conf-dir",
            paramLabel = "DIR",
            description = {
                "Flink configuration directory (the one holding config.yaml).",
                "Default: $" + ENV_FLINK_CONF_DIR + " if set, else $" + ENV_FLINK_HOME + "/conf."
            })
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
        ConfDir chosen = confDir(env, commandLine);
        Path conf = chosen.dir();
        if (!Files.isDirectory(conf)) {
            throw new ParameterException(
                    commandLine, chosen.origin() + ": " + conf + " is not a directory");
        }
        Path configFile = conf.resolve(GlobalConfiguration.FLINK_CONF_FILENAME);
        byte[] content = readConfigFile(configFile, commandLine, chosen.origin());
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
                    chosen.origin() + ": Flink cannot load its configuration "
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
     * The configuration directory and where it came from: {@code --conf-dir}, else {@code
     * $FLINK_CONF_DIR}, else {@code $FLINK_HOME/conf}, the order in which Flink's own scripts
     * ({@code config.sh}) look.
     *
     * @param origin how messages name it: {@code --conf-dir}, {@code $FLINK_CONF_DIR} or {@code
     *     $FLINK_HOME/conf}
     */
    record ConfDir(Path dir, String origin) {}

    /**
     * The configuration directory this command reads.
     *
     * @throws ParameterException when none is given and neither variable is set
     */
    ConfDir confDir(Environment env, CommandLine commandLine) {
        if (confDir != null) {
            return new ConfDir(confDir.toAbsolutePath().normalize(), "--conf-dir");
        }
        String fromConfDir = env.get(ENV_FLINK_CONF_DIR);
        if (fromConfDir != null && !fromConfDir.isBlank()) {
            return new ConfDir(Path.of(fromConfDir.strip()).toAbsolutePath().normalize(), "$" + ENV_FLINK_CONF_DIR);
        }
        String home = env.get(ENV_FLINK_HOME);
        if (home != null && !home.isBlank()) {
            return new ConfDir(Path.of(home.strip()).resolve("conf").toAbsolutePath().normalize(), "$" + ENV_FLINK_HOME + "/conf");
        }
        throw new ParameterException(
                commandLine,
                "Missing --conf-dir=DIR: no Flink configuration directory given, and neither $" + ENV_FLINK_CONF_DIR
                        + " nor $" + ENV_FLINK_HOME + " is set; expected the folder holding config.yaml"
                        + " (e.g. --conf-dir /opt/flink/conf)");
    }

    /**
     * The bytes of {@code config.yaml}, read so that a FIFO there (even one put there after it was
     * looked at) is refused instead of waited on, as Flink's own loader would; null when there is
     * no such file (Flink then says so).
     */
    private static byte[] readConfigFile(Path configFile, CommandLine commandLine, String origin) {
        try {
            return HostFiles.read(configFile, MAX_CONFIG_BYTES);
        } catch (NoSuchFileException e) {
            return null;
        } catch (HostFiles.RefusedFileException e) {
            throw new ConfigFileException(
                    commandLine,
                    origin + ": " + e.getMessage() + "; expected Flink's configuration file, a regular file",
                    e);
        } catch (IOException e) {
            throw new ConfigFileException(
                    commandLine, origin + ": cannot read " + configFile + ": " + DriverParams.osReason(e), e);
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
