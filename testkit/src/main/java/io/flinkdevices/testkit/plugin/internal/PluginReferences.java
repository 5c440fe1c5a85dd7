package io.flinkdevices.testkit.plugin.internal;

import io.flinkdevices.testkit.internal.ClassFileReferences;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/** {@code PluginCheck}'s reference check: what the driver's code uses must load in the plugin. */
public final class PluginReferences {

    /** How many unloadable references are listed before the rest are only counted. */
    private static final int MAX_LISTED_REFERENCES = 10;

    private PluginReferences() {}

    /** The SDK's classes, which its own build checks; an optional path of it needs nothing in the plugin. */
    private static final String SDK = "io.flinkdevices.sdk.";

    /**
     * Every class the driver's code refers to must load through the plugin class loader. The
     * driver's code is every bundled class the factory reaches, class by class, in any package
     * (the driver's root, a sibling package such as {@code com.acme.sticks.util}, a bundled
     * library), but the SDK's: a class bundled but never reached (a test utility, say) may refer to
     * classes the plugin does not bundle without harm.
     */
    public static void check(String factoryClassName, PluginContents contents, ClassLoader pluginLoader, List<String> problems) {
        Map<String, String> missing = new TreeMap<>(); // referenced class -> first referrer
        Map<String, Boolean> loadable = new HashMap<>();
        Set<String> visited = new HashSet<>();
        Deque<String> queue = new ArrayDeque<>();
        queue.add(factoryClassName);
        visited.add(factoryClassName);
        while (!queue.isEmpty()) {
            String referrer = queue.poll();
            byte[] classFile = contents.classFiles.get(referrer);
            if (classFile == null) {
                continue;
            }
            Set<String> refs;
            try {
                refs = ClassFileReferences.of(classFile);
            } catch (IOException ex) {
                problems.add("cannot read class file of " + referrer + ": " + ex.getMessage());
                continue;
            }
            for (String ref : refs) {
                if (ref.startsWith("java.")) {
                    continue;
                }
                if (contents.classes.contains(ref)) {
                    if (!ref.startsWith(SDK) && visited.add(ref)) {
                        queue.add(ref);
                    }
                    continue;
                }
                boolean ok =
                        loadable.computeIfAbsent(
                                ref,
                                r -> {
                                    try {
                                        Class.forName(r, false, pluginLoader);
                                        return true;
                                    } catch (ClassNotFoundException | LinkageError ex) {
                                        return false;
                                    }
                                });
                if (!ok) {
                    missing.putIfAbsent(ref, referrer);
                }
            }
        }
        if (missing.isEmpty()) {
            return;
        }
        String listed =
                missing.entrySet().stream()
                        .limit(MAX_LISTED_REFERENCES)
                        .map(e -> e.getKey() + " (used by " + e.getValue() + ")")
                        .collect(Collectors.joining(", "));
        boolean sdkMissing = missing.keySet().stream().anyMatch(r -> r.startsWith("io.flinkdevices.sdk."));
        problems.add(
                missing.size()
                        + " class"
                        + (missing.size() == 1 ? "" : "es")
                        + " the driver uses cannot be loaded by the plugin class loader, which sees"
                        + " only the plugin's jars and Flink's parent-first packages: "
                        + listed
                        + (missing.size() > MAX_LISTED_REFERENCES
                                ? " and " + (missing.size() - MAX_LISTED_REFERENCES) + " more"
                                : "")
                        + (sdkMissing
                                ? "; bundle the flink-devices SDK (PluginFolder: .includeSdk();"
                                        + " Maven: shade io.flinkdevices:sdk-api into the jar)"
                                : "; bundle the library that holds them into the plugin jar: with Maven's shade plugin, add"
                                        + " its groupId:artifactId to <artifactSet><includes>, relocate its packages under"
                                        + " the driver's own (a <relocation>, so it never meets another copy in Flink or a"
                                        + " job), and filter out module-info.class, META-INF/versions/**/module-info.class"
                                        + " and signature files (META-INF/*.SF, *.DSA, *.RSA); with PluginFolder,"
                                        + " .includeJar(<the library's jar>); see 'Packaging: the plugin jar' in"
                                        + " docs/driver-authors.md"));
    }
}
