package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.doctor.Finding;

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
                            "repair or remove that plugin folder: each folder under "
                                    + config.plugins().pluginsDir()
                                    + " needs its jars, and every class its service file names"));
        }
    }
}
