package io.flinkdevices.cli.flink;

import org.apache.flink.configuration.Configuration;

import java.nio.file.Path;

/**
 * A Flink installation as a TaskManager on this host would see it.
 *
 * @param configuration the configuration as Flink's own loader read it
 * @param configFile the file it was read from
 * @param pluginsDir the plugins root folder
 * @param pluginsDirOrigin where {@code pluginsDir} came from: an option, a variable or the default
 */
public record FlinkSetup(
        Configuration configuration, Path configFile, Path pluginsDir, String pluginsDirOrigin) {}
