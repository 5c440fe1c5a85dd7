package io.flinkdevices.cli.doctor;

import io.flinkdevices.cli.common.CallTimeoutOption;
import io.flinkdevices.cli.common.Environment;
import io.flinkdevices.cli.common.FlinkDirsOptions;
import io.flinkdevices.cli.doctor.checks.StandaloneScriptsCheck;
import io.flinkdevices.cli.flink.FlinkSetup;
import io.flinkdevices.cli.flink.PluginFactories;
import io.flinkdevices.cli.flink.ResourceSetting;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/** {@code flink-devices doctor}: what is wrong with a Flink configuration, and how to fix it. */
@Command(
        name = "doctor",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        header = "Check a Flink configuration against the plugins and this host.",
        description = {
            "Reads config.yaml with Flink's own loader, loads the plugins as a TaskManager does,"
                    + " creates each driver as Flink would, and lists every problem with the key"
                    + " to change and how: keys Flink ignores (misspelt, or of a resource not in"
                    + " external-resources), a resource without factory or amount, a non-numeric"
                    + " amount, a factory in no plugin or in two, params the factory rejects"
                    + " (unknown ones with the nearest known name), invalid or duplicate"
                    + " Kubernetes and Yarn resource names, config keys that disagree with the"
                    + " driver, an amount larger than the driver can hand out on this host, and"
                    + " several resources that a TaskManager started by Flink's standalone scripts"
                    + " would not receive (checked with that Flink's own jars; not an error while"
                    + " every TaskManager of the configuration running here logged them all).",
        },
        footerHeading = "%nExit codes:%n",
        footer = {
            "  0  no problem found",
            "  1  at least one problem (error or warning) found",
            "  2  the command line or the Flink configuration cannot be used",
            "  3  the tool itself failed"
        })
public final class DoctorCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Mixin FlinkDirsOptions dirs;

    @Option(names = "--json", description = "Print one JSON object instead of a list.")
    boolean json;

    @Option(
            names = "--no-devices",
            description =
                    "Do not ask drivers for devices (on a machine that is not a TaskManager"
                            + " host); the amount is then not checked against the host.")
    boolean noDevices;

    @Option(
            names = StandaloneScriptsCheck.ACKNOWLEDGE_OPTION,
            description =
                    "State that every standalone TaskManager of this configuration is started with the"
                            + " resource list as its last argument (bin/taskmanager.sh start"
                            + " '-Dexternal-resources=gpu;fpga'). With several resources and no"
                            + " TaskManager of it running here, the standalone-scripts finding is"
                            + " then a note; a running TaskManager whose log shows fewer resources"
                            + " keeps it an error.")
    boolean startedWithResourceList;

    @Mixin CallTimeoutOption timeout;

    private final Environment env;

    /**
     * @param env where {@code FLINK_PLUGINS_DIR} is read from
     */
    public DoctorCommand(Environment env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        FlinkSetup setup = dirs.resolve(env, spec.commandLine());
        PluginFactories plugins = PluginFactories.load(setup.pluginsDir(), setup.configuration());
        Path home = setup.configFile().getParent().getParent();
        Doctor.Diagnosis diagnosis =
                new Doctor(
                                timeout.get(),
                                !noDevices,
                                home == null ? null : home.resolve("lib"),
                                setup.configFile().getParent(),
                                startedWithResourceList)
                        .examine(setup.configuration(), plugins);
        DoctorReport report =
                new DoctorReport(
                        setup.configFile(),
                        setup.pluginsDir(),
                        setup.pluginsDirOrigin(),
                        plugins.pluginIds(),
                        ResourceSetting.readAll(setup.configuration()).stream()
                                .map(ResourceSetting::name)
                                .toList(),
                        diagnosis.findings(),
                        diagnosis.notes());
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            DoctorRenderer.json(report, out);
        } else {
            DoctorRenderer.text(report, out);
        }
        return report.healthy() ? 0 : 1;
    }
}
