package io.flinkdevices.cli.flink;

import io.flinkdevices.sdk.deploy.KubernetesResourceNames;
import io.flinkdevices.sdk.deploy.YarnResourceNames;

import org.apache.flink.configuration.ExternalResourceOptions;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A resource manager that requests external resources for TaskManagers from its cluster, with the
 * config-key suffix Flink reads for it ({@code KubernetesConfigOptions} and {@code
 * YarnConfigOptions}, which live outside flink-core).
 */
public enum Deployment {
    /** Native Kubernetes: the key names an extended resource of the TaskManager pod. */
    KUBERNETES("kubernetes.config-key"),
    /** Yarn: the key names a resource type of the TaskManager container. */
    YARN("yarn.config-key");

    private final String suffix;

    Deployment(String suffix) {
        this.suffix = suffix;
    }

    /** {@code kubernetes.config-key} or {@code yarn.config-key}. */
    public String suffix() {
        return suffix;
    }

    /** {@code external-resource.<resource>.<suffix>}. */
    public String configKey(String resource) {
        return ExternalResourceOptions.getSystemConfigKeyConfigOptionForResource(resource, suffix);
    }

    /** {@code Kubernetes} or {@code Yarn}. */
    public String label() {
        String lower = name().toLowerCase(Locale.ROOT);
        return Character.toUpperCase(lower.charAt(0)) + lower.substring(1);
    }

    /**
     * Why the cluster would refuse {@code name} as a resource name (a Kubernetes extended resource,
     * a Yarn resource type); empty when it is valid.
     */
    public List<String> nameProblems(String name) {
        return this == KUBERNETES
                ? KubernetesResourceNames.validateExtendedResource(name)
                : YarnResourceNames.validate(name);
    }

    /** Why the cluster would refuse a request of {@code quantity} of {@code name}; empty if none. */
    public List<String> requestProblems(String name, long quantity) {
        List<String> problems = new ArrayList<>(nameProblems(name));
        problems.addAll(
                this == KUBERNETES
                        ? KubernetesResourceNames.validateQuantity(name, quantity)
                        : YarnResourceNames.validateAmount(name, quantity));
        return problems;
    }
}
