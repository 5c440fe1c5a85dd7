package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.doctor.Finding;
import io.flinkdevices.cli.flink.Deployment;

import org.apache.flink.util.StringUtils;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Two resources on one Kubernetes or Yarn resource name: Flink keeps one config key per name and
 * silently drops the other's request. Replays {@code
 * ExternalResourceUtils.getExternalResourceConfigurationKeys}: resources in the order of Flink's
 * hash set, a later one with the same name replacing the earlier.
 */
public final class DuplicateConfigKeysCheck implements Check {

    private final Map<String, List<Finding>> byResource = new HashMap<>();

    @Override
    public void checkConfiguration(CheckedConfig whole, Findings out) {
        for (Deployment d : Deployment.values()) {
            replay(whole, d);
        }
    }

    @Override
    public void checkResource(CheckedResource resource, Findings out) {
        byResource.getOrDefault(resource.name(), List.of()).forEach(out::add);
    }

    private void replay(CheckedConfig whole, Deployment deployment) {
        List<String> listed = whole.names();
        Map<String, String> keptByValue = new HashMap<>();
        Map<String, List<String>> resourcesByValue = new LinkedHashMap<>();
        for (String name : new HashSet<>(listed)) {
            String value = whole.config().getString(deployment.configKey(name), null);
            if (StringUtils.isNullOrWhitespaceOnly(value)) {
                continue;
            }
            keptByValue.put(value, name);
            resourcesByValue.computeIfAbsent(value, v -> new ArrayList<>()).add(name);
        }
        resourcesByValue.forEach(
                (value, names) -> {
                    if (names.size() < 2) {
                        return;
                    }
                    String kept = keptByValue.get(value);
                    List<String> all = new ArrayList<>(listed);
                    all.retainAll(names);
                    for (String name : names) {
                        if (!name.equals(kept)) {
                            byResource
                                    .computeIfAbsent(name, n -> new ArrayList<>())
                                    .add(finding(deployment, name, kept, value, all));
                        }
                    }
                });
    }

    private static Finding finding(
            Deployment deployment, String name, String kept, String value, List<String> all) {
        return Finding.error(
                name,
                deployment.configKey(name),
                "names the same "
                        + deployment.label()
                        + " resource '"
                        + value
                        + "' as "
                        + deployment.configKey(kept)
                        + "; Flink keeps one config key per name"
                        + " (here resource '"
                        + kept
                        + "', an order that can change) and"
                        + " silently drops the other, so the "
                        + deployment.label()
                        + " request for '"
                        + name
                        + "' is lost",
                "give each resource its own "
                        + deployment.label()
                        + " resource name, or merge resources "
                        + String.join(" and ", all)
                        + " into one whose amount is the sum");
    }
}
