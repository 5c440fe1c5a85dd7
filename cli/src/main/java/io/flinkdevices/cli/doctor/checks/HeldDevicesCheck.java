package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.flink.ReadOnlyCoordination;

/**
 * On a TaskManager host: devices that running TaskManagers hold through coordination are theirs,
 * not missing; one note per resource names them with their owners' pids.
 */
public final class HeldDevicesCheck implements Check {

    @Override
    public void checkConfiguration(CheckedConfig config, Findings out) {
        ReadOnlyCoordination.heldNotes(config.config()).forEach(out::note);
    }
}
