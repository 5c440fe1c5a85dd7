package io.flinkdevices.cli.render;

import io.flinkdevices.cli.flink.Deployment;
import io.flinkdevices.cli.flink.DriverDecorators.DraDevices;
import io.flinkdevices.cli.flink.PodNeeds;
import io.flinkdevices.sdk.deploy.DraParams;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.util.StringUtils;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Turns the resources' DRA needs into {@code resource.k8s.io/v1} ResourceClaimTemplates and a
 * TaskManager pod template that references them.
 *
 * <p>Each resource gets a template {@code flink-devices-<resource>} with one request of its device
 * class for {@code amount} devices and the driver's CEL selectors; the pod template names it in
 * {@code spec.resourceClaims} and in the main container's {@code resources.claims}. Kubernetes
 * creates one ResourceClaim per TaskManager pod from it. Resources asked to share a PCIe root go
 * into one template, one request each, with a {@code matchAttribute} constraint on {@value
 * DraParams#PCIE_ROOT_ATTRIBUTE}: a constraint holds only among the requests of one claim. No
 * {@code kubernetes.config-key} is set: Flink would add that extended resource to the pod as well.
 */
public final class DraRender {

    /** The prefix of every ResourceClaimTemplate's name. */
    static final String TEMPLATE_PREFIX = "flink-devices-";

    private DraRender() {}

    /**
     * What {@code render kubernetes --dra} prints.
     *
     * @param rendered the config lines, the pod template (as cluster file), notes and problems
     * @param claimTemplates one YAML document per ResourceClaimTemplate, in order
     */
    public record Output(Rendered rendered, List<String> claimTemplates) {}

    /**
     * @param sameRoot resources whose devices must share a PCIe root; empty for none
     * @param podTemplatePath where the template will be, for the config line; {@code null} to
     *     leave that line to the operator
     */
    public static Output render(
            List<DraNeeds> needs,
            List<String> sameRoot,
            Configuration config,
            String podTemplatePath,
            List<String> collectProblems) {
        List<String> problems = new ArrayList<>(collectProblems);
        Map<String, DraNeeds> byResource = new LinkedHashMap<>();
        Map<String, String> labels = new LinkedHashMap<>();
        Map<String, String> labelOwner = new TreeMap<>();
        for (DraNeeds n : needs) {
            String label = dnsLabel(n.resource());
            String other = labelOwner.putIfAbsent(label, n.resource());
            if (label.isEmpty()) {
                problems.add(
                        n.resource()
                                + ": the resource name has no letter or digit to name its claim"
                                + " after; rename the resource in external-resources");
            } else if (other != null) {
                problems.add(
                        n.resource()
                                + ": its claim would be named '"
                                + label
                                + "' as resource "
                                + other
                                + "'s is; rename one of them in external-resources");
            } else {
                byResource.put(n.resource(), n);
                labels.put(n.resource(), label);
            }
        }

        List<String> group = sameRootGroup(sameRoot, byResource, collectProblems, problems);
        Map<String, String> claims = new LinkedHashMap<>();
        List<String> templates = new ArrayList<>();
        if (!group.isEmpty()) {
            String claim = dnsLabel(String.join("-", group.stream().map(labels::get).toList()));
            claims.put(claim, TEMPLATE_PREFIX + claim);
            templates.add(
                    template(
                            TEMPLATE_PREFIX + claim,
                            group.stream().map(byResource::get).toList(),
                            group.stream().map(labels::get).toList(),
                            true));
        }
        for (DraNeeds n : byResource.values()) {
            if (group.contains(n.resource())) {
                continue;
            }
            String label = labels.get(n.resource());
            claims.put(label, TEMPLATE_PREFIX + label);
            templates.add(template(TEMPLATE_PREFIX + label, List.of(n), List.of(label), false));
        }

        Map<String, String> lines = new LinkedHashMap<>();
        Map<String, String> removals = new LinkedHashMap<>();
        for (String r : byResource.keySet()) {
            String key = Deployment.KUBERNETES.configKey(r);
            String existing = config.getString(key, null);
            if (!StringUtils.isNullOrWhitespaceOnly(existing)) {
                removals.put(
                        key,
                        "with DRA the devices come from the claim, and Flink would also request "
                                + existing.strip()
                                + " as an extended resource");
            }
        }
        if (podTemplatePath != null) {
            lines.put(KubernetesRender.POD_TEMPLATE_OPTION, podTemplatePath);
        }

        List<String> notes = new ArrayList<>();
        KubernetesRender.existingTemplateNote(
                        config, "resourceClaims and " + KubernetesRender.MAIN_CONTAINER + " resources.claims")
                .ifPresent(notes::add);
        if (!templates.isEmpty()) {
            String namespace = config.getString("kubernetes.namespace", "default");
            notes.add(
                    "apply the ResourceClaimTemplates below in the TaskManagers' namespace"
                            + " (kubectl apply -n "
                            + namespace
                            + " -f FILE; kubernetes.namespace is "
                            + namespace
                            + "); Kubernetes creates one ResourceClaim per TaskManager pod from each"
                            + " (resource.k8s.io/v1: Kubernetes 1.34 or newer)");
        }
        List<String> names = new ArrayList<>(byResource.keySet());
        List<PodNeeds.Owned> pods =
                byResource.values().stream().map(n -> new PodNeeds.Owned(n.resource(), n.pod())).toList();
        PodNeeds pod = PodNeeds.merge(pods, problems);
        notes.addAll(PodNeeds.notes(pods));
        List<String> rooted =
                names.stream().filter(r -> byResource.get(r).devices().pcieRoot()).toList();
        // memory registration (IPC_LOCK) is what GPUDirect RDMA between two resources needs
        if (sameRoot.isEmpty() && rooted.size() > 1 && pod.capabilities().contains("IPC_LOCK")) {
            notes.add(
                    String.join(", ", rooted)
                            + ": their devices publish "
                            + DraParams.PCIE_ROOT_ATTRIBUTE
                            + "; --dra-same-pcie-root "
                            + String.join(",", rooted)
                            + " puts them into one claim under one PCIe root (for GPUDirect RDMA)");
        }
        String template = KubernetesRender.podTemplate(Map.of(), Map.of(), pod, claims);
        return new Output(new Rendered(lines, removals, template, notes, problems), templates);
    }

    /**
     * The resources of {@code --dra-same-pcie-root} when all of them can share a root; empty (and
     * why in {@code problems}) when not.
     */
    private static List<String> sameRootGroup(
            List<String> sameRoot,
            Map<String, DraNeeds> byResource,
            List<String> collectProblems,
            List<String> problems) {
        if (sameRoot.isEmpty()) {
            return List.of();
        }
        Set<String> group = new LinkedHashSet<>(sameRoot);
        List<String> wrong = new ArrayList<>();
        for (String r : group) {
            DraNeeds n = byResource.get(r);
            if (n == null) {
                boolean reported =
                        collectProblems.stream().anyMatch(p -> p.startsWith(r + ": "));
                if (!reported) {
                    wrong.add(r + " is not a resource of external-resources");
                }
            } else if (!n.devices().pcieRoot()) {
                wrong.add(
                        r
                                + "'s driver does not say its devices publish "
                                + DraParams.PCIE_ROOT_ATTRIBUTE);
            }
        }
        if (group.size() < 2) {
            wrong.add("name at least two resources");
        }
        if (!wrong.isEmpty() || !group.stream().allMatch(byResource::containsKey)) {
            problems.add(
                    "--dra-same-pcie-root "
                            + String.join(",", sameRoot)
                            + ": "
                            + (wrong.isEmpty() ? "a resource could not be rendered" : String.join("; ", wrong))
                            + "; the resources get one claim each");
            return List.of();
        }
        return new ArrayList<>(group);
    }

    /** One ResourceClaimTemplate with a request per resource, the names DNS labels. */
    static String template(
            String name, List<DraNeeds> needs, List<String> requestNames, boolean sameRoot) {
        StringBuilder y = new StringBuilder();
        y.append("# DRA claim of ")
                .append(String.join(", ", needs.stream().map(DraNeeds::resource).toList()))
                .append('\n');
        y.append("apiVersion: resource.k8s.io/v1\n");
        y.append("kind: ResourceClaimTemplate\n");
        y.append("metadata:\n");
        y.append("  name: ").append(Yaml.quote(name)).append('\n');
        y.append("spec:\n");
        y.append("  spec:\n");
        y.append("    devices:\n");
        y.append("      requests:\n");
        for (int i = 0; i < needs.size(); i++) {
            DraDevices d = needs.get(i).devices();
            y.append("        - name: ").append(Yaml.quote(requestNames.get(i))).append('\n');
            y.append("          exactly:\n");
            y.append("            deviceClassName: ").append(Yaml.quote(d.deviceClass())).append('\n');
            y.append("            allocationMode: \"ExactCount\"\n");
            y.append("            count: ").append(needs.get(i).amount()).append('\n');
            List<String> selectors = DraCel.selectors(d);
            if (!selectors.isEmpty()) {
                y.append("            selectors:\n");
                for (String s : selectors) {
                    y.append("              - cel:\n");
                    y.append("                  expression: ").append(Yaml.quote(s)).append('\n');
                }
            }
        }
        if (sameRoot) {
            y.append("      constraints:\n");
            y.append("        - requests: [")
                    .append(String.join(", ", requestNames.stream().map(Yaml::quote).toList()))
                    .append("]\n");
            y.append("          matchAttribute: ")
                    .append(Yaml.quote(DraParams.PCIE_ROOT_ATTRIBUTE))
                    .append('\n');
        }
        return y.toString();
    }

    /** {@code resource} as a DNS label: lower case, runs of other characters as one '-'. */
    static String dnsLabel(String resource) {
        String label =
                resource.toLowerCase(Locale.ROOT)
                        .replaceAll("[^a-z0-9]+", "-")
                        .replaceAll("^-+|-+$", "");
        // a claim name is a DNS label; the template's name adds the prefix to it
        if (label.length() > 63 - TEMPLATE_PREFIX.length()) {
            label = label.substring(0, 63 - TEMPLATE_PREFIX.length()).replaceAll("-+$", "");
        }
        return label;
    }
}
