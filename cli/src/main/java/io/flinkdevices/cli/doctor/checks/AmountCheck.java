package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.doctor.Finding;
import io.flinkdevices.cli.flink.ResourceSetting;

/** An amount that is missing, not positive, or not a whole number. */
public final class AmountCheck implements Check {

    @Override
    public void checkResource(CheckedResource resource, Findings out) {
        String name = resource.name();
        ResourceSetting setting = resource.setting();
        ResourceSetting.Amount amount = setting.amount();
        switch (amount.state()) {
            case MISSING:
                out.add(
                        Finding.error(
                                name,
                                setting.amountKey(),
                                "not set, so Flink never asks the driver for devices (it only"
                                        + " logs a WARN), tasks get none, and Kubernetes or Yarn"
                                        + " request none",
                                "set it to the number of devices each TaskManager gets, for"
                                        + " example "
                                        + setting.amountKey()
                                        + ": 1"));
                break;
            case NOT_POSITIVE:
                out.add(
                        Finding.error(
                                name,
                                setting.amountKey(),
                                amount.value().orElseThrow()
                                        + " is not positive, so Flink never asks the driver for"
                                        + " devices and tasks get none",
                                "set it to 1 or more, or remove '"
                                        + name
                                        + "' from "
                                        + IgnoredKeysCheck.LIST_KEY));
                break;
            case NOT_A_NUMBER:
                out.add(
                        Finding.error(
                                name,
                                setting.amountKey(),
                                "'"
                                        + amount.raw().orElse("")
                                        + "' is not a whole number; Flink fails the TaskManager"
                                        + " (and the resource manager) on it",
                                "write a whole number of devices, for example "
                                        + setting.amountKey()
                                        + ": 1"));
                break;
            case VALID:
            default:
                break;
        }
    }
}
