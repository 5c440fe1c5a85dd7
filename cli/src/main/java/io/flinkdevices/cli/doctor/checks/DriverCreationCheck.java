package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.doctor.Finding;
import io.flinkdevices.cli.flink.DriverCreation;
import io.flinkdevices.cli.flink.DriverCreation.Failed;
import io.flinkdevices.cli.flink.DriverCreation.FactoryMissing;
import io.flinkdevices.cli.flink.PluginFactories;
import io.flinkdevices.cli.flink.ResourceSetting;
import io.flinkdevices.cli.flink.TimedCall;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Whether Flink gets a driver for the resource: a factory key, a factory in the plugins (a near
 * miss, or the jar in {@code lib/}), and a factory that accepts its params, each problem the
 * factory names reported on its own key with what to change.
 */
public final class DriverCreationCheck implements Check {

    @Override
    public void checkResource(CheckedResource resource, Findings out) {
        String name = resource.name();
        ResourceSetting setting = resource.setting();
        PluginFactories plugins = resource.whole().plugins();
        DriverCreation.Outcome outcome = resource.creation();
        if (outcome instanceof DriverCreation.NoFactoryKey) {
            String found = String.join(", ", plugins.factoryClassNames());
            out.add(
                    Finding.error(
                            name,
                            setting.factoryKey(),
                            "not set, so Flink creates no driver for resource '"
                                    + name
                                    + "' (it only logs a WARN) and tasks get no devices",
                            plugins.factoryClassNames().size() == 1
                                    ? "set it to " + found + " (the factory found in the plugins)"
                                    : "set it to the driver's factory class"
                                            + (found.isEmpty() ? "" : " (found in plugins: " + found + ")")));
        } else if (outcome instanceof FactoryMissing missing) {
            out.add(
                    Finding.error(
                            name,
                            setting.factoryKey(),
                            missing.why() + "; Flink drops the resource with a WARN",
                            missingFix(missing, plugins)));
        } else if (outcome instanceof DriverCreation.TimedOut timedOut) {
            out.add(
                    Finding.error(
                            name,
                            setting.factoryKey(),
                            timedOut.problem().orElseThrow(),
                            Fixes.forTimeout(timedOut.timeout(), "doctor-" + name + "-factory")));
        } else if (outcome instanceof DriverCreation.NullDriver nullDriver) {
            out.add(
                    Finding.error(
                            name,
                            setting.factoryKey(),
                            nullDriver.problem().orElseThrow(),
                            "report it to the driver's author"));
        } else if (outcome instanceof Failed failed) {
            failed(resource, failed, out);
        }
    }

    private static String missingFix(FactoryMissing missing, PluginFactories plugins) {
        if (missing.nearest().isPresent()) {
            return "set it to " + missing.nearest().get();
        }
        if (missing.jarInLib().isPresent()) {
            return "move "
                    + missing.jarInLib().get()
                    + " out of lib/ into its own folder under "
                    + plugins.pluginsDir()
                    + ": Flink loads external resource factories only from plugin folders";
        }
        return "copy the driver's plugin jar into its own folder under "
                + plugins.pluginsDir()
                + " on every TaskManager host, or correct the class name";
    }

    private static void failed(CheckedResource resource, Failed failed, Findings out) {
        String name = resource.name();
        String paramPrefix = resource.setting().paramPrefix();
        String consequence =
                failed.escapesFlink()
                        ? "; this is an Error, which Flink does not catch: the TaskManager"
                                + " fails to start"
                        : "; Flink logs a WARN and drops resource '"
                                + name
                                + "', so tasks get no devices";
        List<String> problems = failed.configProblems();
        if (problems.isEmpty()) {
            out.add(
                    Finding.error(
                            name,
                            paramPrefix + "*",
                            "factory "
                                    + failed.className()
                                    + " cannot create a driver: "
                                    + TimedCall.describeFailure(failed.failure())
                                    + consequence,
                            Fixes.forFailure(failed.failure(), pluginFolder(resource, failed.className()))
                                    .orElse(
                                            "fix what the message names; if it names no key, the"
                                                    + " driver's author should make it do so")));
            return;
        }
        for (String problem : problems) {
            String key = paramPrefix + "*";
            String text = problem;
            int colon = problem.indexOf(": ");
            if (problem.startsWith(IgnoredKeysCheck.PREFIX) && colon > 0) {
                key = problem.substring(0, colon);
                text = problem.substring(colon + 2);
            }
            out.add(
                    Finding.error(
                            name,
                            key,
                            text
                                    + " (factory "
                                    + failed.className()
                                    + " rejects it"
                                    + consequence
                                    + ")",
                            Fixes.forParam(key, text)));
        }
    }

    /** The plugin folder Flink takes {@code className} from. */
    static Optional<Path> pluginFolder(CheckedResource resource, String className) {
        List<String> holders = resource.whole().plugins().pluginsWith(className);
        return holders.isEmpty()
                ? Optional.empty()
                : Optional.of(resource.whole().plugins().pluginsDir().resolve(holders.get(holders.size() - 1)));
    }
}
