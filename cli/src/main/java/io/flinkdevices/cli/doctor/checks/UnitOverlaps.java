package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.doctor.Finding;
import io.flinkdevices.cli.flink.ReadOnlyCoordination;

import io.flinkdevices.sdk.info.LiveProperties;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Finds two resources of one TaskManager whose devices are the same hardware: the same UUID, or a
 * whole GPU and a partition or MIG unit of it (one PCI address, one of them without a {@code
 * partition}). Tasks of both resources would then share it, unless both coordinate through one
 * file, where a held device excludes its parts.
 */
final class UnitOverlaps {

    private record Seen(CheckedResource resource, List<Map<String, String>> devices) {}

    private final List<Seen> seen = new ArrayList<>();

    /** Remembers what {@code resource}'s driver returned and reports overlaps with earlier ones. */
    void add(CheckedResource resource, Set<? extends ExternalResourceInfo> infos, Findings out) {
        List<Map<String, String>> devices = new ArrayList<>();
        try {
            for (ExternalResourceInfo info : infos) {
                Map<String, String> p = new LinkedHashMap<>();
                for (String key : info.getKeys()) {
                    if (!LiveProperties.isLiveKey(key)) { // health and metrics differ between reads
                        info.getProperty(key).ifPresent(v -> p.put(key, v));
                    }
                }
                devices.add(p);
            }
        } catch (RuntimeException e) {
            return; // unreadable properties are DevicesCheck's and discover's finding, not an overlap
        }
        for (Seen earlier : seen) {
            if (sharedCoordination(earlier.resource, resource)) {
                continue;
            }
            List<String> shared = new ArrayList<>();
            for (Map<String, String> a : earlier.devices) {
                for (Map<String, String> b : devices) {
                    if (overlap(a, b)) {
                        shared.add(describe(a) + " and " + describe(b));
                    }
                }
            }
            if (!shared.isEmpty()) {
                String key = IgnoredKeysCheck.PREFIX + resource.name();
                out.add(
                        Finding.error(
                                resource.name(),
                                key,
                                "external-resource."
                                        + earlier.resource.name()
                                        + " and external-resource."
                                        + resource.name()
                                        + " hand out the same hardware on this host ("
                                        + String.join("; ", shared)
                                        + "): a whole device and its partitions or MIG units, so tasks of both"
                                        + " resources would share it",
                                "give both resources coordination ("
                                        + key
                                        + ".param.coordination.enabled: true) with the same coordination.file,"
                                        + " where a held device excludes its parts, or use one unit mode per host"));
            }
        }
        seen.add(new Seen(resource, devices));
    }

    private static boolean sharedCoordination(CheckedResource a, CheckedResource b) {
        String fileA = a.config().getString(a.setting().paramPrefix() + "coordination.file", "").strip();
        String fileB = b.config().getString(b.setting().paramPrefix() + "coordination.file", "").strip();
        return ReadOnlyCoordination.enabled(a.config(), a.setting().paramPrefix())
                && ReadOnlyCoordination.enabled(b.config(), b.setting().paramPrefix())
                && fileA.equals(fileB)
                && (!fileA.isEmpty() || Objects.equals(a.setting().factoryClass(), b.setting().factoryClass()));
    }

    static boolean overlap(Map<String, String> a, Map<String, String> b) {
        String uuidA = a.get("uuid");
        if (uuidA != null && uuidA.equals(b.get("uuid"))) {
            return true;
        }
        String pci = a.get("pci-address");
        return "gpu".equals(a.get("kind"))
                && "gpu".equals(b.get("kind"))
                && pci != null
                && pci.equalsIgnoreCase(b.get("pci-address"))
                && (a.get("partition") == null || b.get("partition") == null);
    }

    private static String describe(Map<String, String> d) {
        String what = d.get("partition") == null ? "whole device" : "partition " + d.get("partition");
        return what + " " + d.getOrDefault("uuid", d.getOrDefault("pci-address", "index " + d.get("index")));
    }
}
