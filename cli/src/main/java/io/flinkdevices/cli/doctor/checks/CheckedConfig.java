package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.flink.PluginFactories;
import io.flinkdevices.cli.flink.ResourceSetting;

import org.apache.flink.configuration.Configuration;

import java.util.List;

/**
 * The configuration a {@code doctor} run checks.
 *
 * @param config the Flink configuration as Flink's loader read it
 * @param plugins the factories of the plugins folder
 * @param resources the resources listed in {@code external-resources}
 * @param onHost whether this is a TaskManager host: drivers are asked for devices, and its files
 *     are checked
 */
public record CheckedConfig(
        Configuration config,
        PluginFactories plugins,
        List<ResourceSetting> resources,
        boolean onHost) {

    public CheckedConfig {
        resources = List.copyOf(resources);
    }

    /** The names of the listed resources, in the order written. */
    public List<String> names() {
        return resources.stream().map(ResourceSetting::name).toList();
    }
}
