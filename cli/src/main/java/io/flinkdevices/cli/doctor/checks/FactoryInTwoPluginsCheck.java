package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.doctor.Finding;
import io.flinkdevices.cli.flink.PluginFactories;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A factory that more than one plugin folder holds: Flink uses the one it loads last, which can
 * differ between hosts. Reported once per factory, on the first resource that names it.
 */
public final class FactoryInTwoPluginsCheck implements Check {

    private final Set<String> reported = new HashSet<>();

    @Override
    public void checkResource(CheckedResource resource, Findings out) {
        PluginFactories plugins = resource.whole().plugins();
        String className = resource.setting().factoryClass().orElse(null);
        if (className == null || plugins.find(className).isEmpty()) {
            return;
        }
        List<String> holders = plugins.pluginsWith(className);
        if (holders.size() < 2 || !reported.add(className)) {
            return;
        }
        String used = holders.get(holders.size() - 1);
        out.add(
                Finding.warning(
                        resource.name(),
                        resource.setting().factoryKey(),
                        "factory "
                                + className
                                + " is in "
                                + holders.size()
                                + " plugins ("
                                + String.join(", ", holders)
                                + " under "
                                + plugins.pluginsDir()
                                + "); Flink uses the one it loads last (here "
                                + used
                                + "), which follows the folder listing order and can"
                                + " differ between hosts and versions",
                        "keep "
                                + className
                                + " in one plugin folder only: remove the others ("
                                + String.join(", ", holders.subList(0, holders.size() - 1))
                                + ")"));
    }
}
