package io.flinkdevices.cli.flink;

import org.apache.flink.configuration.ExternalResourceOptions;

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
}
