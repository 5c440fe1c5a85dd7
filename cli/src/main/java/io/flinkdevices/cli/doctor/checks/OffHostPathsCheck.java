package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.flink.OffHost;

/**
 * Off the TaskManager host ({@code --no-devices}): files only the TaskManagers have are not
 * checked; each that does not exist here is a note.
 */
public final class OffHostPathsCheck implements Check {

    @Override
    public void checkConfiguration(CheckedConfig config, Findings out) {
        OffHost.notes(config.config()).forEach(out::note);
    }
}
