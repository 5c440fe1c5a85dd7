package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.doctor.Finding;
import io.flinkdevices.cli.flink.ReadOnlyCoordination;
import io.flinkdevices.cli.flink.ResourceSetting;
import io.flinkdevices.sdk.coordination.DeviceQuarantine;
import io.flinkdevices.sdk.coordination.QuarantinedDevice;

import java.nio.file.Path;

/**
 * On a TaskManager host: devices out of service in a resource's coordination file (their health
 * failed), which no TaskManager of the host is handed; one warning each, with the reason, since
 * when, who saw it, and the command that returns the device once it is repaired.
 */
public final class QuarantinedDevicesCheck implements Check {

    @Override
    public void checkConfiguration(CheckedConfig config, Findings out) {
        for (ResourceSetting r : config.resources()) {
            for (Path file : ReadOnlyCoordination.enabled(config.config(), r.paramPrefix())
                    ? ReadOnlyCoordination.files(config.config(), r.paramPrefix()) : java.util.List.<Path>of()) {
                for (QuarantinedDevice q : DeviceQuarantine.peek(file)) {
                    out.add(Finding.warning(r.name(), file.toString(),
                            ReadOnlyCoordination.describe(q) + "; no TaskManager of this host is handed it",
                            "once the device is repaired: " + DeviceQuarantine.clearCommand(r.name(), q.deviceId())
                                    + " (or wait: the TaskManager watching it returns it after health.recover-after of"
                                    + " good health)"));
                }
            }
        }
    }
}
