package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.doctor.Finding;

import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;

/** A plugin folder that would stop a TaskManager from starting. */
public final class PluginProblemsCheck implements Check {

    @Override
    public void checkConfiguration(CheckedConfig config, Findings out) {
        for (String problem : config.plugins().problems()) {
            out.add(
                    Finding.error(
                            null,
                            config.plugins().pluginsDir().toString(),
                            problem,
                            problem.startsWith("a plugin's factory")
                                    ? "in that plugin folder, add the jar that holds the class, or"
                                            + " remove the class's line from META-INF/services/"
                                            + ExternalResourceDriverFactory.class.getName()
                                            + " in its jar"
                                    : "give every folder under "
                                            + config.plugins().pluginsDir()
                                            + " its plugin's jars, or remove the folders that"
                                            + " have none"));
        }
    }
}
