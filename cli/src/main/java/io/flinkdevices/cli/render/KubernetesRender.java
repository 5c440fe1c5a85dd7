package io.flinkdevices.cli.render;

import io.flinkdevices.cli.flink.Deployment;
import io.flinkdevices.cli.flink.PodNeeds;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.util.StringUtils;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Turns the resources' Kubernetes needs into Flink config lines and a TaskManager pod template.
 *
 * <p>Flink adds {@code amount} of the resource named by {@code
 * external-resource.<name>.kubernetes.config-key} to the main container's requests and limits,
 * replacing the template's value for that name, and keeps the rest of the template's resources
 * ({@code InitTaskManagerDecorator}, {@code KubernetesUtils.getResourceRequirements}). So a
 * resource gets a config key when its quantity equals its amount and no other resource requests the
 * same name; everything is also in the template, whose limits equal its requests (extended
 * resources cannot be overcommitted), so the pod asks for the right devices either way.
 */
public final class KubernetesRender {

    /** The name Flink requires for the TaskManager's main container. */
    public static final String MAIN_CONTAINER = "flink-main-container";

    /** Flink's option for the TaskManager pod template. */
    public static final String POD_TEMPLATE_OPTION = "kubernetes.pod-template-file.taskmanager";

    private KubernetesRender() {}

    /**
     * @param podTemplatePath where the template will be, for the config line; {@code null} to leave
     *     that line to the operator
     */
    public static Rendered render(
            List<ResourceNeeds> needs,
            Configuration config,
            String podTemplatePath,
            List<String> collectProblems) {
        List<String> problems = new ArrayList<>(collectProblems);
        Map<String, Long> requests = new TreeMap<>();
        Map<String, List<String>> owners = new TreeMap<>();
        Map<String, String> nodeSelector = new TreeMap<>();
        Map<String, String> selectorOwner = new TreeMap<>();
        for (ResourceNeeds n : needs) {
            n.requests()
                    .forEach(
                            (name, quantity) -> {
                                requests.merge(name, quantity, Long::sum);
                                owners.computeIfAbsent(name, k -> new ArrayList<>())
                                        .add(n.resource());
                            });
            new TreeMap<>(n.nodeSelector())
                    .forEach(
                            (label, value) -> {
                                String before = nodeSelector.putIfAbsent(label, value);
                                if (before != null && !before.equals(value)) {
                                    problems.add(
                                            n.resource()
                                                    + ": needs node label "
                                                    + label
                                                    + "="
                                                    + value
                                                    + " but resource "
                                                    + selectorOwner.get(label)
                                                    + " needs "
                                                    + label
                                                    + "="
                                                    + before
                                                    + "; no node has both, so the template keeps "
                                                    + before);
                                } else {
                                    selectorOwner.putIfAbsent(label, n.resource());
                                }
                            });
        }

        Map<String, String> lines = new LinkedHashMap<>();
        Map<String, String> removals = new LinkedHashMap<>();
        for (ResourceNeeds n : needs) {
            String key = Deployment.KUBERNETES.configKey(n.resource());
            String chosen = null;
            for (Map.Entry<String, Long> e : n.requests().entrySet()) {
                if (e.getValue() == n.amount() && owners.get(e.getKey()).size() == 1) {
                    chosen = e.getKey();
                    break;
                }
            }
            if (chosen != null) {
                lines.put(key, chosen);
            } else if (!StringUtils.isNullOrWhitespaceOnly(config.getString(key, null))) {
                String name = config.getString(key, null);
                removals.put(
                        key,
                        owners.getOrDefault(name, List.of()).size() > 1
                                ? "resources "
                                        + String.join(" and ", owners.get(name))
                                        + " both request "
                                        + name
                                        + "; Flink would keep one and request only its amount,"
                                        + " the template requests the sum"
                                : "Flink would request "
                                        + n.amount()
                                        + " of "
                                        + name
                                        + ", but the template requests what the driver needs");
            }
        }
        if (podTemplatePath != null) {
            lines.put(POD_TEMPLATE_OPTION, podTemplatePath);
        }

        List<String> notes = new ArrayList<>();
        existingTemplateNote(config, "nodeSelector and " + MAIN_CONTAINER + " resources")
                .ifPresent(notes::add);
        List<PodNeeds.Owned> pods = needs.stream().map(n -> new PodNeeds.Owned(n.resource(), n.pod())).toList();
        PodNeeds pod = PodNeeds.merge(pods, problems);
        notes.addAll(PodNeeds.notes(pods));
        return new Rendered(lines, removals, podTemplate(requests, nodeSelector, pod, Map.of()), notes, problems);
    }

    /**
     * A note when the configuration already names a TaskManager pod template: merge {@code parts}
     * of the rendered one into that file.
     */
    static Optional<String> existingTemplateNote(Configuration config, String parts) {
        String existing = config.getString(POD_TEMPLATE_OPTION, null);
        if (StringUtils.isNullOrWhitespaceOnly(existing)) {
            return Optional.empty();
        }
        return Optional.of(
                POD_TEMPLATE_OPTION
                        + " is already "
                        + existing
                        + ": merge this template's "
                        + parts
                        + " into that file");
    }

    /** A pod template with nothing for the container beyond the devices. */
    static String podTemplate(Map<String, Long> requests, Map<String, String> nodeSelector) {
        return podTemplate(requests, nodeSelector, PodNeeds.NONE, Map.of());
    }

    /**
     * A pod template Flink's {@code kubernetes.pod-template-file.taskmanager} accepts: the devices'
     * extended resources, and what the drivers said the main container needs beyond them ({@code
     * pod}: environment, capabilities, host paths, extra resources, tolerations); {@code claims}
     * (the pod's claim name to its ResourceClaimTemplate) go into {@code spec.resourceClaims} and
     * the main container's {@code resources.claims}.
     */
    static String podTemplate(
            Map<String, Long> requests,
            Map<String, String> nodeSelector,
            PodNeeds pod,
            Map<String, String> claims) {
        StringBuilder y = new StringBuilder();
        y.append("apiVersion: v1\n");
        y.append("kind: Pod\n");
        y.append("metadata:\n");
        y.append("  name: taskmanager-pod-template\n");
        y.append("spec:\n");
        if (!nodeSelector.isEmpty()) {
            y.append("  nodeSelector:\n");
            nodeSelector.forEach(
                    (k, v) ->
                            y.append("    ")
                                    .append(Yaml.quote(k))
                                    .append(": ")
                                    .append(Yaml.quote(v))
                                    .append('\n'));
        }
        if (!requests.isEmpty() || !pod.tolerations().isEmpty()) {
            y.append("  tolerations:\n");
        }
        // what Kubernetes' ExtendedResourceToleration admission plugin adds where it is on:
        // nodes tainted with the resource's name (GPU node pools usually are) accept the pod
        requests.keySet()
                .forEach(
                        name ->
                                y.append("    - key: ")
                                        .append(Yaml.quote(name))
                                        .append("\n      operator: Exists\n")
                                        .append("      effect: NoSchedule\n"));
        for (Map<String, String> t : pod.tolerations()) {
            String prefix = "    - ";
            for (String field : List.of("key", "operator", "value", "effect")) {
                String v = t.get(field);
                if (v != null && !v.isEmpty()) {
                    y.append(prefix).append(field).append(": ").append(Yaml.quote(v)).append('\n');
                    prefix = "      ";
                }
            }
            if (prefix.equals("    - ")) {
                y.append("    - operator: Exists\n");
            }
        }
        Map<String, String> volumes = volumeNames(pod.hostPaths().keySet());
        if (!volumes.isEmpty()) {
            y.append("  volumes:\n");
            volumes.forEach((path, volume) -> {
                y.append("    - name: ").append(volume).append('\n');
                y.append("      hostPath:\n");
                y.append("        path: ").append(Yaml.quote(path)).append('\n');
                String type = pod.hostPaths().get(path);
                if (!type.isEmpty()) {
                    y.append("        type: ").append(type).append('\n');
                }
            });
        }
        if (!claims.isEmpty()) {
            y.append("  resourceClaims:\n");
            claims.forEach(
                    (claim, template) ->
                            y.append("    - name: ")
                                    .append(Yaml.quote(claim))
                                    .append("\n      resourceClaimTemplateName: ")
                                    .append(Yaml.quote(template))
                                    .append('\n'));
        }
        y.append("  containers:\n");
        y.append("    # Flink finds its container by this name; do not change it\n");
        y.append("    - name: ").append(MAIN_CONTAINER).append('\n');
        if (!pod.environment().isEmpty()) {
            y.append("      env:\n");
            pod.environment().forEach((name, value) -> {
                y.append("        - name: ").append(name).append('\n');
                y.append("          value: ").append(Yaml.quote(value)).append('\n');
            });
        }
        if (!pod.capabilities().isEmpty()) {
            y.append("      securityContext:\n");
            y.append("        capabilities:\n");
            y.append("          add: [")
                    .append(String.join(", ", pod.capabilities().stream().map(Yaml::quote).toList()))
                    .append("]\n");
        }
        if (!volumes.isEmpty()) {
            y.append("      volumeMounts:\n");
            volumes.forEach((path, volume) -> {
                y.append("        - name: ").append(volume).append('\n');
                y.append("          mountPath: ").append(Yaml.quote(path)).append('\n');
            });
        }
        Map<String, String> quantities = new TreeMap<>();
        requests.forEach((k, v) -> quantities.put(k, Long.toString(v)));
        pod.extraResources().forEach(quantities::putIfAbsent);
        if (!quantities.isEmpty() || !claims.isEmpty()) {
            y.append("      resources:\n");
        }
        if (!claims.isEmpty()) {
            y.append("        claims:\n");
            claims.keySet()
                    .forEach(claim -> y.append("          - name: ").append(Yaml.quote(claim)).append('\n'));
        }
        if (!quantities.isEmpty()) {
            // extended resources and hugepages cannot be overcommitted: limits must equal requests
            for (String section : List.of("requests", "limits")) {
                y.append("        ").append(section).append(":\n");
                quantities.forEach(
                        (k, v) ->
                                y.append("          ")
                                        .append(Yaml.quote(k))
                                        .append(": ")
                                        .append(Yaml.quote(v))
                                        .append('\n'));
            }
        }
        return y.toString();
    }

    /**
     * A volume name per host path, a DNS label Kubernetes accepts: {@code host-dev-infiniband} for
     * {@code /dev/infiniband}, numbered where two paths would share one.
     */
    static Map<String, String> volumeNames(java.util.Set<String> paths) {
        Map<String, String> names = new LinkedHashMap<>();
        java.util.Set<String> used = new java.util.HashSet<>();
        for (String path : new java.util.TreeSet<>(paths)) {
            String base = ("host" + path.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9]+", "-"))
                    .replaceAll("-+$", "");
            if (base.length() > 58) {
                base = base.substring(0, 58).replaceAll("-+$", "");
            }
            String name = base;
            for (int i = 2; !used.add(name); i++) {
                name = base + "-" + i;
            }
            names.put(path, name);
        }
        return names;
    }
}
