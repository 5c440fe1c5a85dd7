package io.flinkdevices.cli.render;

import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

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

    @Option(
            names = "--dra-same-pcie-root",
            paramLabel = "RESOURCE",
            split = ",",
            description =
                    "With --dra: put these resources (a GPU and an RDMA NIC, say) into one claim"
                            + " whose devices all share the standard attribute"
                            + " resource.kubernetes.io/pcieRoot.")
    List<String> sameRoot = new ArrayList<>();

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
