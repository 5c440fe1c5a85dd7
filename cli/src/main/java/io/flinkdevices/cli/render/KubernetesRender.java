package io.flinkdevices.cli.render;

import io.flinkdevices.cli.flink.Deployment;
import io.flinkdevices.cli.flink.ResourceSetting;

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
        List<String> names = needs.stream().map(ResourceNeeds::resource).toList();
        List<String> rdma = resourcesOf(RDMA_FACTORY, names, config);
        List<String> openCl = resourcesOf(OPENCL_FACTORY, names, config);
        notes.addAll(containerNotes(rdma, openCl));
        return new Rendered(
                lines, removals, podTemplate(requests, nodeSelector, !rdma.isEmpty(), !openCl.isEmpty(), Map.of()), notes, problems);
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

    /** What the template adds to the main container for RDMA and OpenCL resources, and why. */
    static List<String> containerNotes(List<String> rdma, List<String> openCl) {
        List<String> notes = new ArrayList<>();
        if (!rdma.isEmpty()) {
            notes.add(
                    String.join(", ", rdma)
                            + ": RDMA registers memory, which needs the IPC_LOCK capability (or an unlimited memlock"
                            + " limit) in the TaskManager container; the template adds it to "
                            + MAIN_CONTAINER
                            + "'s securityContext");
        }
        if (!openCl.isEmpty()) {
            notes.add(
                    String.join(", ", openCl)
                            + ": OpenCL runtimes built on LLVM replace the JVM's signal handlers, so the template preloads"
                            + " the JDK's signal-chaining library, LD_PRELOAD="
                            + JSIG_IN_FLINK_IMAGE
                            + " (the JDK of Flink's official images); change it for an image whose JDK lies elsewhere");
        }
        return notes;
    }

    /** The OpenCL driver's factory: its TaskManagers need the JDK's libjsig preloaded. */
    static final String OPENCL_FACTORY = "io.flinkdevices.fpga.OpenClFpgaDriverFactory";

    /** libjsig of the JDK in Flink's official images (eclipse-temurin). */
    static final String JSIG_IN_FLINK_IMAGE = "/opt/java/openjdk/lib/libjsig.so";

    /** The resources among {@code resources} whose driver is {@code factory}. */
    static List<String> resourcesOf(String factory, List<String> resources, Configuration config) {
        List<String> names = new ArrayList<>();
        for (String r : resources) {
            if (factory.equals(ResourceSetting.read(config, r).factoryClass().orElse(null))) {
                names.add(r);
            }
        }
        return names;
    }

    /** The RDMA driver's factory: its TaskManagers register memory and so need {@code IPC_LOCK}. */
    static final String RDMA_FACTORY = "io.flinkdevices.rdma.RdmaDriverFactory";

    /** A pod template without extra capabilities. */
    static String podTemplate(Map<String, Long> requests, Map<String, String> nodeSelector) {
        return podTemplate(requests, nodeSelector, false, false, Map.of());
    }

    /**
     * A pod template Flink's {@code kubernetes.pod-template-file.taskmanager} accepts; with {@code
     * ipcLock} its main container may lock memory (RDMA), with {@code jsig} it preloads the JDK's
     * signal-chaining library (OpenCL); {@code claims} (the pod's claim name to its
     * ResourceClaimTemplate) go into {@code spec.resourceClaims} and the main container's {@code
     * resources.claims}.
     */
    static String podTemplate(
            Map<String, Long> requests,
            Map<String, String> nodeSelector,
            boolean ipcLock,
            boolean jsig,
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
        if (!requests.isEmpty()) {
            // what Kubernetes' ExtendedResourceToleration admission plugin adds where it is on:
            // nodes tainted with the resource's name (GPU node pools usually are) accept the pod
            y.append("  tolerations:\n");
            requests.keySet()
                    .forEach(
                            name ->
                                    y.append("    - key: ")
                                            .append(Yaml.quote(name))
                                            .append("\n      operator: Exists\n")
                                            .append("      effect: NoSchedule\n"));
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
        if (jsig) {
            y.append("      env:\n");
            y.append("        - name: LD_PRELOAD\n");
            y.append("          value: ").append(Yaml.quote(JSIG_IN_FLINK_IMAGE)).append('\n');
        }
        if (ipcLock) {
            y.append("      securityContext:\n");
            y.append("        capabilities:\n");
            y.append("          add: [\"IPC_LOCK\"]\n");
        }
        if (!requests.isEmpty() || !claims.isEmpty()) {
            y.append("      resources:\n");
        }
        if (!claims.isEmpty()) {
            y.append("        claims:\n");
            claims.keySet()
                    .forEach(claim -> y.append("          - name: ").append(Yaml.quote(claim)).append('\n'));
        }
        if (!requests.isEmpty()) {
            // extended resources cannot be overcommitted: limits must equal requests
            for (String section : List.of("requests", "limits")) {
                y.append("        ").append(section).append(":\n");
                requests.forEach(
                        (k, v) ->
                                y.append("          ")
                                        .append(Yaml.quote(k))
                                        .append(": ")
                                        .append(Yaml.quote(Long.toString(v)))
                                        .append('\n'));
            }
        }
        return y.toString();
    }
}
