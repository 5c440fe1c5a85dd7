package io.flinkdevices.cli.render;

import io.flinkdevices.cli.common.CallTimeoutOption;
import io.flinkdevices.cli.common.Environment;
import io.flinkdevices.cli.common.FlinkDirsOptions;
import io.flinkdevices.cli.flink.Deployment;
import io.flinkdevices.cli.flink.FlinkSetup;
import io.flinkdevices.cli.flink.OffHost;
import io.flinkdevices.cli.flink.PluginFactories;
import io.flinkdevices.cli.flink.ResourceSetting;

import org.apache.flink.configuration.Configuration;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code flink-devices render kubernetes|flink-operator|yarn}: the deployment settings the drivers
 * need.
 */
@Command(
        name = "render",
        mixinStandardHelpOptions = true,
        header = "Print the Kubernetes, Flink Kubernetes Operator or Yarn settings the configured drivers need.",
        description = {
            "Creates each driver of external-resources as Flink would (without asking it for"
                    + " devices, so any machine with the plugins will do), reads what its"
                    + " Kubernetes or Yarn decorator says a TaskManager needs, and prints the"
                    + " Flink config lines and the cluster-side file. A driver without a decorator"
                    + " is rendered from its existing config key."
        },
        synopsisSubcommandLabel = "(kubernetes | flink-operator | yarn)",
        subcommands = {
            RenderCommand.Kubernetes.class,
            FlinkOperatorCommand.class,
            RenderCommand.Yarn.class
        })
public final class RenderCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    private final Environment env;

    /**
     * @param env where {@code FLINK_PLUGINS_DIR} is read from
     */
    public RenderCommand(Environment env) {
        this.env = env;
    }

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), "Missing deployment: kubernetes, flink-operator or yarn");
    }

    /** What the subcommands share: the Flink directories and the time limit. */
    abstract static class Base implements Callable<Integer> {
        @Spec CommandSpec spec;

        @Mixin FlinkDirsOptions dirs;

        @Mixin CallTimeoutOption timeout;

        @ParentCommand RenderCommand parent;

        Configuration configuration;
        Path configFile;
        Path pluginsDir;

        List<ResourceNeeds> collect(Deployment deployment, List<String> problems) {
            Environment env = parent == null ? Environment.system() : parent.env;
            FlinkSetup setup = dirs.resolve(env, spec.commandLine());
            configuration = setup.configuration();
            configFile = setup.configFile();
            pluginsDir = setup.pluginsDir();
            PluginFactories plugins = PluginFactories.load(setup.pluginsDir(), configuration);
            problems.addAll(plugins.problems());
            // rendering happens off the TaskManager host: its files are notes, not failures
            return OffHost.withoutHostPathChecks(
                    () -> new NeedsCollector(timeout.get()).collect(configuration, plugins, deployment, problems));
        }

        int finish(Rendered rendered) {
            PrintWriter err = spec.commandLine().getErr();
            rendered.problems().forEach(p -> err.println("flink-devices: render: " + p));
            err.flush();
            spec.commandLine().getOut().flush();
            return rendered.problems().isEmpty() ? 0 : 1;
        }

        void configSection(Rendered rendered, PrintWriter out) {
            out.println(
                    "# Flink configuration: add to "
                            + configFile
                            + " (replacing lines with the same key)");
            if (ResourceSetting.readAll(configuration).isEmpty()) {
                out.println(
                        "# no external resources configured: external-resources is not set or is"
                            + " 'none'");
            }
            rendered.configLines().forEach((k, v) -> out.println(k + ": " + Yaml.quote(v)));
            rendered.configRemovals()
                    .forEach((k, why) -> out.println("# remove " + k + ": " + why));
        }

        void notes(Rendered rendered, PrintWriter out) {
            rendered.notes().forEach(n -> out.println("# " + n));
            OffHost.notes(configuration).forEach(n -> out.println("# note: " + n));
        }

        static void write(Path file, String content) {
            try {
                Path parent = file.toAbsolutePath().getParent();
                if (parent != null) {
                    Files.createDirectories(parent);
                }
                Files.writeString(file, content, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write " + file, e);
            }
        }
    }

    /** {@code render kubernetes}. */
    @Command(
            name = "kubernetes",
            mixinStandardHelpOptions = true,
            sortOptions = false,
            header = "Flink config lines and a TaskManager pod template for native Kubernetes.",
            description = {
                "Prints external-resource.<name>.kubernetes.config-key lines and a pod template"
                        + " for kubernetes.pod-template-file.taskmanager: the main container"
                        + " (flink-main-container) with limits equal to requests for every"
                        + " extended resource the drivers need, and their node selectors. The"
                        + " output is a YAML stream: the config lines, then '---' and the"
                        + " template (or the template goes to --pod-template FILE)."
            },
            footerHeading = "%nExit codes:%n",
            footer = {
                "  0  every resource was rendered",
                "  1  a resource could not be rendered (why: on stderr), the rest was",
                "  2  the command line or the Flink configuration cannot be used",
                "  3  the tool itself failed"
            })
    static final class Kubernetes extends Base {

        @Option(
                names = "--pod-template",
                paramLabel = "FILE",
                description =
                        "Write the pod template to FILE and print only the config lines, with"
                                + " kubernetes.pod-template-file.taskmanager set to FILE.")
        Path podTemplate;

        @Override
        public Integer call() {
            List<String> problems = new ArrayList<>();
            List<ResourceNeeds> needs = collect(Deployment.KUBERNETES, problems);
            Path file = podTemplate == null ? null : podTemplate.toAbsolutePath().normalize();
            Rendered rendered =
                    KubernetesRender.render(
                            needs, configuration, file == null ? null : file.toString(), problems);
            PrintWriter out = spec.commandLine().getOut();
            configSection(rendered, out);
            notes(rendered, out);
            if (file == null) {
                out.println("---");
                out.println(
                        "# TaskManager pod template: save it as a file and set "
                                + KubernetesRender.POD_TEMPLATE_OPTION
                                + " to its path");
                out.print(rendered.clusterFile());
            } else {
                write(file, rendered.clusterFile());
            }
            return finish(rendered);
        }
    }

    /** {@code render yarn}. */
    @Command(
            name = "yarn",
            mixinStandardHelpOptions = true,
            sortOptions = false,
            header = "Flink config lines and resource-types.xml for Yarn.",
            description = {
                "Prints external-resource.<name>.yarn.config-key lines, the resource-types.xml"
                        + " that defines every resource type the drivers need (or writes it to"
                        + " --resource-types FILE), and what the NodeManagers and the scheduler"
                        + " need besides."
            },
            footerHeading = "%nExit codes:%n",
            footer = {
                "  0  every resource was rendered",
                "  1  a resource could not be rendered (why: on stderr), the rest was",
                "  2  the command line or the Flink configuration cannot be used",
                "  3  the tool itself failed"
            })
    static final class Yarn extends Base {

        @Option(
                names = "--resource-types",
                paramLabel = "FILE",
                description = "Write resource-types.xml to FILE instead of printing it.")
        Path resourceTypes;

        @Override
        public Integer call() {
            List<String> problems = new ArrayList<>();
            List<ResourceNeeds> needs = collect(Deployment.YARN, problems);
            Rendered rendered = YarnRender.render(needs, problems);
            PrintWriter out = spec.commandLine().getOut();
            configSection(rendered, out);
            if (resourceTypes == null) {
                out.println();
                out.println("# resource-types.xml:");
                out.print(rendered.clusterFile());
                out.println();
            } else {
                Path file = resourceTypes.toAbsolutePath().normalize();
                write(file, rendered.clusterFile());
                out.println("# resource-types.xml written to " + file);
            }
            notes(rendered, out);
            return finish(rendered);
        }
    }
}
