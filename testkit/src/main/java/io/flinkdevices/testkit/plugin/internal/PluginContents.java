package io.flinkdevices.testkit.plugin.internal;

import io.flinkdevices.testkit.plugin.PluginFolder;

import org.apache.flink.configuration.CoreOptions;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.MalformedURLException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** What a plugin's jars hold, read once for {@code PluginCheck}'s checks. */
public final class PluginContents {

    /** Class-file prefixes a plugin must not bundle, with the library each belongs to. */
    public static final Map<String, String> FORBIDDEN_PREFIXES = forbiddenPrefixes();

    /** The lines of the factory service file, each with its jar. */
    public final List<String> serviceEntries = new ArrayList<>();
    /** Every class the jars hold, by name. */
    public final Set<String> classes = new TreeSet<>();
    /** The class files, by class name. */
    public final Map<String, byte[]> classFiles = new TreeMap<>();
    /** Classes under a forbidden prefix, by prefix. */
    public final Map<String, List<String>> forbidden = new LinkedHashMap<>();

    /** Adds what {@code jar} holds. */
    public void read(Path jar) throws IOException {
        try (JarFile jarFile = new JarFile(jar.toFile())) {
            Enumeration<JarEntry> entries = jarFile.entries();
            while (entries.hasMoreElements()) {
                JarEntry entry = entries.nextElement();
                String name = entry.getName();
                if (entry.isDirectory()) {
                    continue;
                }
                if (name.equals(PluginFolder.FACTORY_SERVICE_FILE)) {
                    try (InputStream in = jarFile.getInputStream(entry)) {
                        serviceEntries.addAll(serviceLines(in, jar));
                    }
                    continue;
                }
                if (!name.endsWith(".class")
                        || name.startsWith("META-INF/")
                        || name.endsWith("module-info.class")
                        || name.endsWith("package-info.class")) {
                    continue;
                }
                String className =
                        name.substring(0, name.length() - ".class".length()).replace('/', '.');
                classes.add(className);
                for (String prefix : FORBIDDEN_PREFIXES.keySet()) {
                    if (name.startsWith(prefix)) {
                        forbidden.computeIfAbsent(prefix, p -> new ArrayList<>()).add(name);
                    }
                }
                try (InputStream in = jarFile.getInputStream(entry)) {
                    classFiles.put(className, in.readAllBytes());
                }
            }
        }
    }

    private static List<String> serviceLines(InputStream in, Path jar) throws IOException {
        List<String> out = new ArrayList<>();
        BufferedReader reader =
                new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        for (String line = reader.readLine(); line != null; line = reader.readLine()) {
            int hash = line.indexOf('#');
            String value = (hash >= 0 ? line.substring(0, hash) : line).trim();
            if (!value.isEmpty()) {
                out.add(value + " (in " + jar.getFileName() + ")");
            }
        }
        return out;
    }

    /** The jars of a plugin folder, in the order Flink puts them on the class path. */
    public static List<Path> jarsIn(Path folder) throws IOException {
        try (Stream<Path> files = Files.list(folder)) {
            return files.filter(p -> Files.isRegularFile(p) && p.toString().endsWith(".jar"))
                    .sorted(java.util.Comparator.comparing(p -> p.toUri().toString()))
                    .collect(Collectors.toList());
        }
    }

    /** The problem of a plugin folder without a jar. */
    public static String noJarsProblem(Path folder) {
        boolean looksLikeRoot;
        try (Stream<Path> files = Files.list(folder)) {
            looksLikeRoot = files.anyMatch(Files::isDirectory);
        } catch (IOException e) {
            looksLikeRoot = false;
        }
        return "no jar in plugin folder "
                + folder
                + (looksLikeRoot
                        ? "; it holds folders: pass one plugin folder (plugins/<name>), not the"
                                + " plugins root"
                        : "");
    }

    /** The jars as URLs. */
    public static URL[] urls(List<Path> jars) {
        URL[] urls = new URL[jars.size()];
        for (int i = 0; i < urls.length; i++) {
            try {
                urls[i] = jars.get(i).toUri().toURL();
            } catch (MalformedURLException e) {
                throw new IllegalArgumentException("cannot turn " + jars.get(i) + " into a URL", e);
            }
        }
        return urls;
    }

    private static Map<String, String> forbiddenPrefixes() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("org/apache/flink/", "Apache Flink");
        Map<String, String> known =
                Map.of(
                        "org.slf4j", "SLF4J",
                        "org.apache.log4j", "Log4j 1",
                        "org.apache.logging", "Log4j 2",
                        "org.apache.commons.logging", "Commons Logging",
                        "ch.qos.logback", "Logback");
        for (String pattern : CoreOptions.PARENT_FIRST_LOGGING_PATTERNS) {
            String prefix = pattern.endsWith(".") ? pattern : pattern + ".";
            m.put(prefix.replace('.', '/'), known.getOrDefault(pattern, "logging"));
        }
        return Collections.unmodifiableMap(m);
    }
}
