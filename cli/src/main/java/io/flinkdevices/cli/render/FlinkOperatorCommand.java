package io.flinkdevices.cli.render;

import io.flinkdevices.cli.flink.Deployment;
import io.flinkdevices.cli.flink.ResourceSetting;

import org.apache.flink.configuration.Configuration;

import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.TypeConversionException;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** {@code flink-devices render flink-operator}: a FlinkDeployment for the Flink Kubernetes Operator. */
@Command(
        name = "flink-operator",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        header = "A FlinkDeployment for the Flink Kubernetes Operator.",
        description = {
            "Prints a flink.apache.org/v1beta1 FlinkDeployment (a session cluster): the"
                    + " external-resources settings of the Flink configuration and the"
                    + " kubernetes.config-key lines of 'render kubernetes' under"
                    + " spec.flinkConfiguration, its TaskManager pod template under"
                    + " spec.taskManager.podTemplate, the JobManager and TaskManager memory"
                    + " from jobmanager.memory.process.size and taskmanager.memory.process.size"
                    + " (1600m and 1728m when unset). A pod template with resource claims gets"
                    + " a warning: operators up to "
                    + FlinkOperatorRender.LAST_PRUNING_OPERATOR
                    + " drop them.",
            "With --dra the devices come from Kubernetes Dynamic Resource Allocation, as with"
                    + " 'render kubernetes --dra': the ResourceClaimTemplates come first in the"
                    + " YAML stream, then the FlinkDeployment, whose pod template claims them and"
                    + " whose flinkConfiguration leaves out the kubernetes.config-key lines."
        },
        footerHeading = "%nExit codes:%n",
        footer = RenderCommand.EXIT_CODES)
final class FlinkOperatorCommand extends RenderCommand.Base {

    @Option(
            names = "--name",
            paramLabel = "NAME",
            defaultValue = "flink-devices",
            description = "metadata.name of the FlinkDeployment (default: ${DEFAULT-VALUE}).")
    String name;

    @Option(
            names = "--image",
            paramLabel = "IMAGE",
            required = true,
            description = "The Flink image; it must carry the drivers' plugin folders.")
    String image;

    @Option(
            names = "--flink-version",
            paramLabel = "VERSION",
            required = true,
            converter = FlinkVersionConverter.class,
            description =
                    "The image's Flink version, as the operator's FlinkVersion (v1_20) or as"
                            + " Flink writes it (1.20, 2.0.1); one the operator's CRD knows ("
                            + "v1_13 to v2_2 in operator "
                            + FlinkOperatorRender.CRD_OPERATOR
                            + ").")
    String flinkVersion;

    @Option(
            names = "--service-account",
            paramLabel = "ACCOUNT",
            defaultValue = "flink",
            description =
                    "The account the JobManager creates TaskManager pods with (default:"
                            + " ${DEFAULT-VALUE}, the operator's Helm chart creates it).")
    String serviceAccount;

    @Mixin DraOptions draOptions;

    @Option(
            names = {"-o", "--output"},
            paramLabel = "FILE",
            description = "Write the FlinkDeployment to FILE instead of printing it.")
    Path output;

    /**
     * Documents that go before the FlinkDeployment in the same YAML stream, each without
     * {@code ---}: objects the deployment refers to, which must exist first.
     */
    final List<String> documentsBefore = new ArrayList<>();

    @Override
    public Integer call() {
        FlinkOperatorRender.Options options;
        try {
            options = new FlinkOperatorRender.Options(name, image, flinkVersion, serviceAccount);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        boolean dra = draOptions.enabled(spec.commandLine());
        OutputFile outputFile;
        try {
            outputFile = OutputFile.of("--output", output);
        } catch (OutputFile.Unwritable e) {
            return unwritable(e);
        }
        List<String> problems = new ArrayList<>();
        Rendered rendered = dra ? renderDra(problems) : renderExtendedResources(problems);
        String templateFile = configuration.getString(KubernetesRender.POD_TEMPLATE_OPTION, null);
        StringWriter text = new StringWriter();
        PrintWriter yaml = new PrintWriter(text);
        FlinkOperatorRender.header(pluginsDir.toString()).forEach(l -> yaml.println("# " + l));
        if (templateFile != null && !templateFile.isBlank()) {
            yaml.println(
                    "# "
                            + KubernetesRender.POD_TEMPLATE_OPTION
                            + " ("
                            + templateFile
                            + ") is not used: the operator takes the TaskManager pod template from"
                            + " spec.taskManager.podTemplate; merge that file into it");
        }
        notes(rendered, yaml);
        rendered.configRemovals()
                .forEach((k, why) -> yaml.println("# " + k + " is left out of spec.flinkConfiguration: " + why));
        if (ResourceSetting.readAll(configuration).isEmpty()) {
            yaml.println(
                    "# no external resources configured: external-resources is not set or is"
                            + " 'none'");
        }
        Optional<String> warning = FlinkOperatorRender.claimsWarning(rendered.clusterFile());
        warning.ifPresent(w -> yaml.println("# warning: " + w));
        for (String document : documentsBefore) {
            yaml.print(document);
            yaml.println("---");
        }
        yaml.print(
                FlinkOperatorRender.deployment(
                        options,
                        FlinkOperatorRender.flinkConfiguration(configuration, rendered),
                        configuration,
                        rendered.clusterFile()));
        yaml.flush();
        PrintWriter out = spec.commandLine().getOut();
        if (outputFile == null) {
            out.print(text);
        } else {
            try {
                outputFile.write(text.toString());
            } catch (OutputFile.Unwritable e) {
                return unwritable(e);
            }
            out.println("# FlinkDeployment written to " + outputFile.file());
        }
        warning.ifPresent(
                w -> spec.commandLine().getErr().println("flink-devices: render: warning: " + w));
        return finish(rendered);
    }

    /** The claim templates go to {@link #documentsBefore}. */
    private Rendered renderDra(List<String> problems) {
        List<DraNeeds> needs = collectDra(problems);
        DraRender.Output output =
                DraRender.render(needs, draOptions.sameRoot, withoutTemplateFile(), null, problems);
        documentsBefore.addAll(output.claimTemplates());
        return output.rendered();
    }

    private Rendered renderExtendedResources(List<String> problems) {
        List<ResourceNeeds> needs = collect(Deployment.KUBERNETES, problems);
        return KubernetesRender.render(needs, withoutTemplateFile(), null, problems);
    }

    /** The Flink configuration less its pod-template file: the operator sets the TaskManager pod template itself. */
    private Configuration withoutTemplateFile() {
        Configuration config = new Configuration(configuration);
        config.removeKey(KubernetesRender.POD_TEMPLATE_OPTION);
        return config;
    }

    /** {@code --flink-version}: the operator's FlinkVersion, or a Flink version turned into one. */
    static final class FlinkVersionConverter implements ITypeConverter<String> {
        @Override
        public String convert(String value) {
            try {
                return FlinkOperatorRender.flinkVersion(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}
