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

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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

    /** The exit codes every render subcommand documents in its help. */
    static final String EXIT_CODES =
            "  0  every resource was rendered%n"
                    + "  1  a resource could not be rendered (why: on stderr), the rest was%n"
                    + "  2  the command line or the Flink configuration cannot be used%n"
                    + "  3  the tool itself failed%n"
                    + "  4  an output FILE cannot be written (the option, the file and the OS reason%n"
                    + "     on stderr); nothing was printed";

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
            PluginFactories plugins = load(problems);
            // rendering happens off the TaskManager host: its files are notes, not failures
            return OffHost.withoutHostPathChecks(
                    () -> new NeedsCollector(timeout.get()).collect(configuration, plugins, deployment, problems));
        }

        /** The DRA needs of every resource that can go into a claim; why the others cannot in {@code problems}. */
        List<DraNeeds> collectDra(List<String> problems) {
            PluginFactories plugins = load(problems);
            return OffHost.withoutHostPathChecks(
                    () -> new DraCollector(timeout.get()).collect(configuration, plugins, problems));
        }

        /** Reads the Flink configuration and the plugin folders. */
        PluginFactories load(List<String> problems) {
            Environment env = parent == null ? Environment.system() : parent.env;
            FlinkSetup setup = dirs.resolve(env, spec.commandLine());
            configuration = setup.configuration();
            configFile = setup.configFile();
            pluginsDir = setup.pluginsDir();
            PluginFactories plugins = PluginFactories.load(setup.pluginsDir(), configuration);
            problems.addAll(plugins.problems());
            return plugins;
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

        /** Says why an output file cannot be written, in one line; the exit code to return. */
        int unwritable(OutputFile.Unwritable e) {
            PrintWriter err = spec.commandLine().getErr();
            err.println("flink-devices: render: " + e.getMessage());
            err.flush();
            return OutputFile.EXIT_UNWRITABLE;
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
                        + " template (or the template goes to --pod-template FILE).",
                "With --dra the devices come from Kubernetes Dynamic Resource Allocation instead:"
                        + " one resource.k8s.io/v1 ResourceClaimTemplate per resource (its"
                        + " driver's DeviceClass, amount devices, CEL selectors from the driver's"
                        + " kubernetes.dra.* params), referenced by the pod template's"
                        + " resourceClaims and the main container's resources.claims, printed"
                        + " after the template as further YAML documents."
            },
            footerHeading = "%nExit codes:%n",
            footer = RenderCommand.EXIT_CODES)
    static final class Kubernetes extends Base {

        @Option(
                names = "--pod-template",
                paramLabel = "FILE",
                description =
                        "Write the pod template to FILE and print only the config lines (with"
                                + " --dra, and the claim templates), with"
                                + " kubernetes.pod-template-file.taskmanager set to FILE.")
        Path podTemplate;

        @Mixin DraOptions draOptions;

        @Override
        public Integer call() {
            boolean dra = draOptions.enabled(spec.commandLine());
            OutputFile template;
            try {
                template = OutputFile.of("--pod-template", podTemplate);
            } catch (OutputFile.Unwritable e) {
                return unwritable(e);
            }
            try {
                return dra ? callDra(template) : callExtendedResources(template);
            } catch (OutputFile.Unwritable e) {
                return unwritable(e);
            }
        }

        private int callExtendedResources(OutputFile template) throws OutputFile.Unwritable {
            List<String> problems = new ArrayList<>();
            List<ResourceNeeds> needs = collect(Deployment.KUBERNETES, problems);
            Path file = template == null ? null : template.file();
            Rendered rendered =
                    KubernetesRender.render(
                            needs, configuration, file == null ? null : file.toString(), problems);
            PrintWriter out = spec.commandLine().getOut();
            printConfigAndTemplate(rendered, template, out);
            return finish(rendered);
        }

        private int callDra(OutputFile template) throws OutputFile.Unwritable {
            List<String> problems = new ArrayList<>();
            List<DraNeeds> needs = collectDra(problems);
            Path file = template == null ? null : template.file();
            DraRender.Output output =
                    DraRender.render(
                            needs,
                            draOptions.sameRoot,
                            configuration,
                            file == null ? null : file.toString(),
                            problems);
            Rendered rendered = output.rendered();
            PrintWriter out = spec.commandLine().getOut();
            printConfigAndTemplate(rendered, template, out);
            for (String claimTemplate : output.claimTemplates()) {
                out.println("---");
                out.print(claimTemplate);
            }
            return finish(rendered);
        }

        /**
         * The config lines and notes, then the pod template: printed, or written to {@code file}
         * first, so that nothing is printed when it cannot be written.
         */
        private void printConfigAndTemplate(Rendered rendered, OutputFile file, PrintWriter out)
                throws OutputFile.Unwritable {
            if (file != null) {
                file.write(rendered.clusterFile());
            }
            configSection(rendered, out);
            notes(rendered, out);
            if (file == null) {
                out.println("---");
                out.println(
                        "# TaskManager pod template: save it as a file and set "
                                + KubernetesRender.POD_TEMPLATE_OPTION
                                + " to its path");
                out.print(rendered.clusterFile());
            }
        }
    }

    /** {@code render yarn}. */
    @Command(
            name = "yarn",
            mixinStandardHelpOptions = true,
            sortOptions = false,
            header = "Flink config lines and the Hadoop files for Yarn.",
            description = {
                "Prints external-resource.<name>.yarn.config-key lines and three Hadoop"
                        + " configuration files: resource-types.xml, which defines every resource"
                        + " type the drivers need; node-resources.xml, each NodeManager's count of"
                        + " them; and the capacity-scheduler.xml property without which the"
                        + " ResourceManager refuses them. Then what the NodeManagers need for"
                        + " isolation. A file given with its option is written there instead."
            },
            footerHeading = "%nExit codes:%n",
            footer = RenderCommand.EXIT_CODES)
    static final class Yarn extends Base {

        @Option(
                names = "--resource-types",
                paramLabel = "FILE",
                description = "Write resource-types.xml to FILE instead of printing it.")
        Path resourceTypes;

        @Option(
                names = "--node-resources",
                paramLabel = "FILE",
                description = "Write node-resources.xml to FILE instead of printing it.")
        Path nodeResources;

        @Option(
                names = "--capacity-scheduler",
                paramLabel = "FILE",
                description =
                        "Write the capacity-scheduler.xml property to FILE (a configuration file"
                                + " holding only it) instead of printing it.")
        Path capacityScheduler;

        @Override
        public Integer call() {
            Map<String, OutputFile> targets = new HashMap<>();
            try {
                targets.put(YarnRender.RESOURCE_TYPES, OutputFile.of("--resource-types", resourceTypes));
                targets.put(YarnRender.NODE_RESOURCES, OutputFile.of("--node-resources", nodeResources));
                targets.put(
                        YarnRender.CAPACITY_SCHEDULER,
                        OutputFile.of("--capacity-scheduler", capacityScheduler));
            } catch (OutputFile.Unwritable e) {
                return unwritable(e);
            }
            OutputFile.refuseSharedPaths(
                    spec.commandLine(),
                    Arrays.asList(
                            targets.get(YarnRender.RESOURCE_TYPES),
                            targets.get(YarnRender.NODE_RESOURCES),
                            targets.get(YarnRender.CAPACITY_SCHEDULER)));
            List<String> problems = new ArrayList<>();
            List<ResourceNeeds> needs = collect(Deployment.YARN, problems);
            YarnRendered yarn = YarnRender.render(needs, problems);
            // the files first: when one cannot be written, nothing is printed
            for (HadoopFile f : yarn.hadoopFiles()) {
                OutputFile target = target(targets, f.name());
                if (target != null) {
                    try {
                        target.write(f.xml());
                    } catch (OutputFile.Unwritable e) {
                        return unwritable(e);
                    }
                }
            }
            PrintWriter out = spec.commandLine().getOut();
            configSection(yarn.rendered(), out);
            for (HadoopFile f : yarn.hadoopFiles()) {
                OutputFile target = target(targets, f.name());
                if (target == null) {
                    out.println();
                    out.println("# " + f.name() + " (" + f.where() + "):");
                    out.print(f.xml());
                } else {
                    out.println(
                            "# " + f.name() + " written to " + target.file() + " (" + f.where() + ")");
                }
            }
            out.println();
            notes(yarn.rendered(), out);
            return finish(yarn.rendered());
        }

        private static OutputFile target(Map<String, OutputFile> targets, String fileName) {
            if (!targets.containsKey(fileName)) {
                throw new IllegalStateException("no option for " + fileName);
            }
            return targets.get(fileName);
        }
    }
}
