package io.flinkdevices.cli.render;

import java.util.List;
import java.util.Map;

/**
 * What {@code render} prints for one deployment.
 *
 * @param configLines Flink config keys to set, in order, with their values
 * @param configRemovals Flink config keys to remove, each with the reason
 * @param clusterFile the pod template (Kubernetes) or {@code resource-types.xml} (Yarn)
 * @param notes comment lines that say where the cluster file goes and what else it needs
 * @param problems why some resource could not be rendered, one line each; empty when all were
 */
public record Rendered(
        Map<String, String> configLines,
        Map<String, String> configRemovals,
        String clusterFile,
        List<String> notes,
        List<String> problems) {

    public Rendered {
        configLines =
                java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(configLines));
        configRemovals =
                java.util.Collections.unmodifiableMap(
                        new java.util.LinkedHashMap<>(configRemovals));
        notes = List.copyOf(notes);
        problems = List.copyOf(problems);
    }
}
