package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.doctor.Finding;
import io.flinkdevices.cli.flink.Deployment;
import io.flinkdevices.cli.flink.ResourceSetting;
import io.flinkdevices.sdk.internal.NearMiss;

import org.apache.flink.configuration.ExternalResourceOptions;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Keys Flink ignores: near misses of its own keys ({@code external-resouces}, {@code
 * external_resource.x}), keys under a listed resource that Flink does not read ({@code ammount},
 * {@code params.x}), and keys of a resource that {@code external-resources} does not list.
 */
public final class IgnoredKeysCheck implements Check {

    static final String PREFIX = "external-resource.";
    static final String LIST_KEY = ExternalResourceOptions.EXTERNAL_RESOURCE_LIST.key();
    private static final String PARAM = "param";
    private static final List<String> RESOURCE_SUFFIXES =
            List.of(
                    "amount",
                    "driver-factory.class",
                    Deployment.KUBERNETES.suffix(),
                    Deployment.YARN.suffix());

    @Override
    public void checkConfiguration(CheckedConfig whole, Findings out) {
        List<String> listed = whole.names();
        int empty = ResourceSetting.emptyEntries(whole.config());
        if (empty > 0) {
            String value = whole.config().getString(LIST_KEY, "");
            out.add(
                    Finding.warning(
                            null,
                            LIST_KEY,
                            "'"
                                    + value
                                    + "' has "
                                    + (empty == 1 ? "an empty entry" : empty + " empty entries")
                                    + ", which Flink reads as a resource named '' without an amount"
                                    + " and ignores",
                            listed.isEmpty()
                                    ? "remove " + LIST_KEY + ", or list the resources: " + LIST_KEY + ": gpu"
                                    : "remove the empty "
                                            + (empty == 1 ? "entry" : "entries")
                                            + ": "
                                            + LIST_KEY
                                            + ": "
                                            + String.join(";", listed)));
        }
        Map<String, String> unlisted = new LinkedHashMap<>();
        for (String key : new TreeSet<>(whole.config().keySet())) {
            if (key.equals(LIST_KEY)) {
                continue;
            }
            if (!key.startsWith(PREFIX)) {
                topLevelNearMiss(key, out);
                continue;
            }
            String rest = key.substring(PREFIX.length());
            String owner = null;
            for (String name : listed) {
                if (rest.startsWith(name + ".")
                        && (owner == null || name.length() > owner.length())) {
                    owner = name;
                }
            }
            if (owner == null) {
                int dot = rest.indexOf('.');
                unlisted.putIfAbsent(dot < 0 ? rest : rest.substring(0, dot), key);
                continue;
            }
            String suffix = rest.substring(owner.length() + 1);
            if (!RESOURCE_SUFFIXES.contains(suffix) && !suffix.startsWith(PARAM + ".")) {
                unknownSuffix(owner, key, suffix, out);
            }
        }
        String raw = whole.config().getString(LIST_KEY, null);
        String listedText =
                !listed.isEmpty()
                        ? LIST_KEY + " lists " + String.join(";", listed)
                        : raw == null || raw.isBlank() || raw.strip().equals("none")
                                ? LIST_KEY + " is not set or is 'none'"
                                : LIST_KEY + " '" + raw + "' lists no resource";
        unlisted.forEach((name, firstKey) -> unlisted(listed, listedText, name, firstKey, out));
    }

    private static void unknownSuffix(String owner, String key, String suffix, Findings out) {
        String resourcePrefix = PREFIX + owner + ".";
        Optional<String> meant = nearSuffix(suffix);
        out.add(
                Finding.warning(
                        owner,
                        key,
                        "unknown key: under "
                                + resourcePrefix
                                + " Flink reads only "
                                + String.join(", ", RESOURCE_SUFFIXES)
                                + " and "
                                + PARAM
                                + ".*, and ignores this one"
                                + meant.map(m -> "; did you mean " + resourcePrefix + m + "?")
                                        .orElse(""),
                        meant.map(m -> "rename it to " + resourcePrefix + m)
                                .orElse(
                                        "remove it, or move it under "
                                                + resourcePrefix
                                                + PARAM
                                                + ". if it is a driver parameter")));
    }

    private static void unlisted(
            List<String> listed, String listedText, String name, String firstKey, Findings out) {
        Optional<String> meant = NearMiss.closest(name, listed, 2);
        String keys = PREFIX + name + ".*";
        if (meant.isPresent()) {
            out.add(
                    Finding.error(
                            meant.get(),
                            firstKey,
                            "resource '"
                                    + name
                                    + "' is not listed ("
                                    + listedText
                                    + "), so Flink ignores "
                                    + keys
                                    + "; did you mean '"
                                    + meant.get()
                                    + "'?",
                            "rename " + keys + " to " + PREFIX + meant.get() + ".*"));
            return;
        }
        List<String> all = new ArrayList<>(listed);
        all.add(name);
        out.add(
                Finding.warning(
                        null,
                        firstKey,
                        "resource '"
                                + name
                                + "' is configured but not listed ("
                                + listedText
                                + "), so Flink ignores "
                                + keys,
                        "add it: "
                                + LIST_KEY
                                + ": "
                                + String.join(";", all)
                                + ", or remove "
                                + keys));
    }

    private static void topLevelNearMiss(String key, Findings out) {
        int dot = key.indexOf('.');
        String head = dot < 0 ? key : key.substring(0, dot);
        if (dot < 0 && NearMiss.distance(key, LIST_KEY) <= 2) {
            out.add(
                    Finding.error(
                            null,
                            key,
                            "unknown key, which Flink ignores; did you mean " + LIST_KEY + "?",
                            "rename it to " + LIST_KEY));
        } else if (dot > 0 && NearMiss.distance(head, "external-resource") <= 2) {
            String meant = PREFIX + key.substring(dot + 1);
            out.add(
                    Finding.error(
                            null,
                            key,
                            "unknown key, which Flink ignores; did you mean " + meant + "?",
                            "rename it to " + meant));
        }
    }

    /** {@code params.count} means {@code param.count}; {@code ammount} means {@code amount}. */
    private static Optional<String> nearSuffix(String suffix) {
        int dot = suffix.indexOf('.');
        if (dot > 0 && NearMiss.distance(suffix.substring(0, dot), PARAM) <= 2) {
            Optional<String> whole = NearMiss.closest(suffix, RESOURCE_SUFFIXES, 2);
            return whole.isPresent() ? whole : Optional.of(PARAM + suffix.substring(dot));
        }
        return NearMiss.closest(suffix, RESOURCE_SUFFIXES, 3);
    }
}
