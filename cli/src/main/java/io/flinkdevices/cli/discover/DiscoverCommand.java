package io.flinkdevices.cli.discover;

import io.flinkdevices.cli.common.CallTimeoutOption;
import io.flinkdevices.cli.common.Environment;
import io.flinkdevices.cli.common.FlinkDirsOptions;
import io.flinkdevices.cli.flink.FlinkSetup;
import io.flinkdevices.cli.flink.PluginFactories;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code flink-devices discover}: what every configured driver finds on this host. */
@Command(
        name = "discover",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        header = "Run every external resource driver of a Flink configuration on this host.",
        description = {
            "Reads config.yaml with Flink's own loader, loads the plugins as a TaskManager does,"
                    + " creates each driver listed in external-resources with the params Flink"
                    + " would pass, asks it for the configured amount of devices, and prints"
                    + " what tasks would receive.",
            "",
            "Status per resource: ok = the driver returned the configured amount and a"
                    + " TaskManager starting now would get that many (enough devices are free);"
                    + " unavailable = the driver works, but too few devices are free now (the"
                    + " others are held by running TaskManagers, quarantined, or failed);"
                    + " skipped = the amount is missing or not positive, so Flink never asks the"
                    + " driver; error = anything else (missing or unknown factory, non-numeric"
                    + " amount, factory or driver failure, timeout, wrong device count).",
            "",
            "Per resource it also prints how many devices are free, held (by which process),"
                    + " quarantined and failed, reading the coordination file without taking"
                    + " anything."
        },
        footerHeading = "%nExit codes:%n",
        footer = {
            "  0  every resource is ok: this host can serve each one now (also when none is configured)",
            "  1  a resource is skipped or in error, or a plugin cannot be loaded",
            "  2  the command line or the Flink configuration cannot be used",
            "  3  the tool itself failed",
            "  4  every driver works, but a resource is unavailable: too few of its devices are free now"
        })
public final class DiscoverCommand implements Callable<Integer> {

    /** Exit code when every driver works but a resource cannot be served now (too few devices free). */
    public static final int EXIT_UNAVAILABLE = 4;

    @Spec CommandSpec spec;

    @Mixin FlinkDirsOptions dirs;

    @Option(names = "--json", description = "Print one JSON object instead of tables.")
    boolean json;

    @Mixin CallTimeoutOption timeout;

    private final Environment env;

    /**
     * @param env where {@code FLINK_PLUGINS_DIR} is read from
     */
    public DiscoverCommand(Environment env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        FlinkSetup setup = dirs.resolve(env, spec.commandLine());
        PluginFactories plugins = PluginFactories.load(setup.pluginsDir(), setup.configuration());
        List<ResourceReport> resources = new Discovery(timeout.get()).run(setup.configuration(), plugins);
        DiscoveryReport report =
                new DiscoveryReport(
                        setup.configFile(),
                        setup.pluginsDir(),
                        setup.pluginsDirOrigin(),
                        plugins.pluginIds(),
                        plugins.problems(),
                        resources);

        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            JsonRenderer.render(report, out);
            // stdout holds only the JSON document; problems outside any resource go to stderr
            PrintWriter err = spec.commandLine().getErr();
            report.pluginProblems().forEach(p -> err.println("flink-devices: " + p));
            err.flush();
        } else {
            TableRenderer.render(report, out);
        }
        return report.allOk() ? 0 : report.onlyUnavailable() ? EXIT_UNAVAILABLE : 1;
    }
}
