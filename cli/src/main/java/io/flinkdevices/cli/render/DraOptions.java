package io.flinkdevices.cli.render;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code --dra} and {@code --dra-same-pcie-root}, the options of {@code render kubernetes} and
 * {@code render flink-operator} that request the devices through Kubernetes Dynamic Resource
 * Allocation.
 */
final class DraOptions {

    @Option(
            names = "--dra",
            description =
                    "Request the devices through Kubernetes Dynamic Resource Allocation: print"
                            + " a ResourceClaimTemplate per resource and reference them from the"
                            + " pod template, instead of extended resources.")
    boolean dra;

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    /** The resources of {@code --dra-same-pcie-root}, in the order given. */
    final List<String> sameRoot = new ArrayList<>();

    // a method, not a split field: picocli drops the empty entries of ",," without a word
    @Option(
            names = "--dra-same-pcie-root",
            paramLabel = "RESOURCE[,RESOURCE...]",
            description =
                    "With --dra: put these resources (a GPU and an RDMA NIC, say) into one claim"
                            + " whose devices all share the standard attribute"
                            + " resource.kubernetes.io/pcieRoot.")
    void sameRoot(String value) {
        List<String> names = new ArrayList<>();
        for (String entry : value.split(",", -1)) {
            String name = entry.strip();
            if (name.isEmpty()) {
                throw new ParameterException(
                        mixee.commandLine(),
                        "--dra-same-pcie-root '"
                                + value
                                + "': an empty entry; expected resource names of"
                                + " external-resources separated by ',' (gpu,rdma)");
            }
            names.add(name);
        }
        sameRoot.addAll(names);
    }

    /**
     * Whether {@code --dra} was given.
     *
     * @throws ParameterException when {@code --dra-same-pcie-root} was given without it
     */
    boolean enabled(CommandLine commandLine) {
        if (!sameRoot.isEmpty() && !dra) {
            throw new ParameterException(commandLine, "--dra-same-pcie-root needs --dra");
        }
        return dra;
    }
}
