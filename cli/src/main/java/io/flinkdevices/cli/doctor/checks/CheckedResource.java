package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.flink.DriverCreation;
import io.flinkdevices.cli.flink.ResourceSetting;
import io.flinkdevices.cli.flink.ResourceSetting.AmountState;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.configuration.Configuration;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * One resource under check, its driver created once for every check.
 *
 * @param whole the configuration it is part of
 * @param setting its {@code external-resource.<name>.*} settings
 * @param creation how creating its driver went
 */
public record CheckedResource(
        CheckedConfig whole, ResourceSetting setting, DriverCreation.Outcome creation) {

    /** The resource name. */
    public String name() {
        return setting.name();
    }

    /** The Flink configuration. */
    public Configuration config() {
        return whole.config();
    }

    /** The driver as a TaskManager creates it; empty when it cannot be created. */
    public Optional<ExternalResourceDriver> driver() {
        return creation instanceof DriverCreation.Created c
                ? Optional.of(c.driver())
                : Optional.empty();
    }

    /** The driver to ask for devices (coordination off); empty when there is none. */
    public Optional<ExternalResourceDriver> deviceDriver() {
        return creation instanceof DriverCreation.Created c
                ? Optional.ofNullable(c.deviceDriver())
                : Optional.empty();
    }

    /** The amount, when Flink would ask the driver for that many devices. */
    public OptionalLong amount() {
        return setting.amount().state() == AmountState.VALID
                ? OptionalLong.of(setting.amount().value().orElseThrow())
                : OptionalLong.empty();
    }
}
