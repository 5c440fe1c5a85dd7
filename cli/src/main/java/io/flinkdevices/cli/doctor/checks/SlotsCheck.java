package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.doctor.Finding;

import org.apache.flink.configuration.TaskManagerOptions;

/**
 * One slot per device: more slots than devices put two subtasks of a TaskManager on one device
 * ({@code DeviceSelection.forSubtask}).
 */
public final class SlotsCheck implements Check {

    @Override
    public void checkResource(CheckedResource resource, Findings out) {
        if (resource.amount().isEmpty()) {
            return;
        }
        long amount = resource.amount().getAsLong();
        int slots = resource.config().get(TaskManagerOptions.NUM_TASK_SLOTS);
        if (slots <= amount) {
            return;
        }
        String amountKey = resource.setting().amountKey();
        String slotsKey = TaskManagerOptions.NUM_TASK_SLOTS.key();
        out.add(
                Finding.warning(
                        resource.name(),
                        slotsKey,
                        slots
                                + " slots but "
                                + amountKey
                                + " is "
                                + amount
                                + ": a TaskManager runs up to "
                                + slots
                                + " subtasks on "
                                + amount
                                + " devices, and DeviceSelection.forSubtask gives some of"
                                + " them the same device",
                        "set "
                                + slotsKey
                                + " to "
                                + amount
                                + ", or "
                                + amountKey
                                + " to "
                                + slots
                                + " (unless the subtasks are meant to share devices)"));
    }
}
