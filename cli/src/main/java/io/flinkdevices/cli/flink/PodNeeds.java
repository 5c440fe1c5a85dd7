package io.flinkdevices.cli.flink;

import io.flinkdevices.sdk.deploy.KubernetesPodNeeds;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a TaskManager's main container needs beyond the devices, as drivers answer through sdk-api's
 * {@code KubernetesResourceDecorator}: capabilities, environment, host paths, extra resources,
 * tolerations, and why. The CLI knows no driver: every line of the pod template beyond the
 * devices comes from here.
 *
 * @param capabilities Linux capabilities to add, in the order first asked for
 * @param environment environment variables, sorted by name
 * @param hostPaths host path to its {@code hostPath} type, sorted by path
 * @param extraResources resource name to Kubernetes quantity, sorted by name
 * @param tolerations tolerations, each a map of key, operator, value and effect
 * @param reasons why, one sentence each
 */
public record PodNeeds(
        List<String> capabilities,
        Map<String, String> environment,
        Map<String, String> hostPaths,
        Map<String, String> extraResources,
        List<Map<String, String>> tolerations,
        List<String> reasons) {

    /** Nothing beyond the devices. */
    public static final PodNeeds NONE = new PodNeeds(List.of(), Map.of(), Map.of(), Map.of(), List.of(), List.of());

    public PodNeeds {
        capabilities = List.copyOf(new LinkedHashSet<>(capabilities));
        environment = Collections.unmodifiableMap(new TreeMap<>(environment));
        hostPaths = Collections.unmodifiableMap(new TreeMap<>(hostPaths));
        extraResources = Collections.unmodifiableMap(new TreeMap<>(extraResources));
        List<Map<String, String>> t = new ArrayList<>();
        tolerations.forEach(m -> t.add(Collections.unmodifiableMap(new LinkedHashMap<>(m))));
        tolerations = List.copyOf(t);
        reasons = List.copyOf(reasons);
    }

    /** Whether the container needs nothing beyond the devices. */
    public boolean isEmpty() {
        return capabilities.isEmpty() && environment.isEmpty() && hostPaths.isEmpty() && extraResources.isEmpty()
                && tolerations.isEmpty();
    }

    /** Every problem of these answers as the API server would see them (sdk-api's rules). */
    public List<String> problems() {
        List<String> problems = new ArrayList<>();
        capabilities.forEach(c -> problems.addAll(KubernetesPodNeeds.validateCapability(c)));
        environment.forEach((n, v) -> problems.addAll(KubernetesPodNeeds.validateEnvironment(n, v)));
        hostPaths.forEach((p, t) -> problems.addAll(KubernetesPodNeeds.validateHostPath(p, t)));
        extraResources.forEach((n, q) -> problems.addAll(KubernetesPodNeeds.validateExtraResource(n, q)));
        tolerations.forEach(t -> problems.addAll(KubernetesPodNeeds.validateToleration(t)));
        return problems;
    }

    /** One resource's needs, for {@link #merge}. */
    public record Owned(String resource, PodNeeds needs) {}

    /**
     * The needs of one pod from every resource's: capabilities, host paths and tolerations
     * together; an environment variable or extra resource two resources set differently is a
     * problem (the first one's value is kept).
     */
    public static PodNeeds merge(List<Owned> all, List<String> problems) {
        List<String> capabilities = new ArrayList<>();
        Map<String, String> env = new TreeMap<>();
        Map<String, String> envOwner = new TreeMap<>();
        Map<String, String> paths = new TreeMap<>();
        Map<String, String> extra = new TreeMap<>();
        Map<String, String> extraOwner = new TreeMap<>();
        List<Map<String, String>> tolerations = new ArrayList<>();
        for (Owned o : all) {
            PodNeeds n = o.needs();
            capabilities.addAll(n.capabilities());
            n.environment().forEach((k, v) -> keepFirst(env, envOwner, "environment variable", k, v, o.resource(), problems));
            n.hostPaths().forEach((p, t) -> {
                String before = paths.putIfAbsent(p, t);
                if (before != null && !before.equals(t) && !t.isEmpty()) {
                    if (before.isEmpty()) {
                        paths.put(p, t);
                    } else {
                        problems.add(o.resource() + ": needs host path " + p + " of type " + t + " but another resource"
                                + " needs it as " + before + "; the template keeps " + before);
                    }
                }
            });
            n.extraResources().forEach((k, v) -> keepFirst(extra, extraOwner, "resource", k, v, o.resource(), problems));
            n.tolerations().forEach(t -> {
                if (!tolerations.contains(t)) {
                    tolerations.add(t);
                }
            });
        }
        return new PodNeeds(capabilities, env, paths, extra, tolerations, List.of());
    }

    private static void keepFirst(
            Map<String, String> values,
            Map<String, String> owners,
            String what,
            String name,
            String value,
            String resource,
            List<String> problems) {
        String before = values.putIfAbsent(name, value);
        if (before == null) {
            owners.put(name, resource);
        } else if (!before.equals(value)) {
            problems.add(resource + ": needs " + what + " " + name + "=" + value + " but resource " + owners.get(name)
                    + " needs " + name + "=" + before + "; the template keeps " + before);
        }
    }

    /**
     * The notes for the operator: each reason once, after the resources that gave it ({@code rdma,
     * rdma2: RDMA registers memory ...}).
     */
    public static List<String> notes(List<Owned> all) {
        Map<String, List<String>> byReason = new LinkedHashMap<>();
        for (Owned o : all) {
            for (String reason : o.needs().reasons()) {
                byReason.computeIfAbsent(reason, r -> new ArrayList<>()).add(o.resource());
            }
        }
        List<String> notes = new ArrayList<>();
        byReason.forEach((reason, resources) -> notes.add(String.join(", ", resources) + ": " + reason));
        return notes;
    }
}
