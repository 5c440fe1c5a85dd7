package io.flinkdevices.testkit.plugin.internal;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

/**
 * Writes a plugin jar whose bytes depend only on its entries: sorted entries, a fixed time stamp,
 * and a folder entry for every package (class-path scanners look for those).
 */
public final class ReproducibleJar {

    // 1980-02-01, the earliest time a zip entry can carry; any fixed value keeps jars reproducible
    private static final long FIXED_ENTRY_TIME = 315_532_800_000L + 31L * 24 * 3600 * 1000;

    private ReproducibleJar() {}

    /** Writes {@code entries}, in their order, to {@code jar} with a manifest naming {@code pluginName}. */
    public static void write(Path jar, String pluginName, Map<String, JarEntrySet.Entry> entries) throws IOException {
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().putValue("Created-By", "flink-devices testkit PluginFolder");
        manifest.getMainAttributes().putValue("Flink-Plugin-Name", pluginName);

        try (OutputStream out = Files.newOutputStream(jar);
                JarOutputStream jos = new JarOutputStream(out)) {
            JarEntry manifestEntry = new JarEntry(JarFile.MANIFEST_NAME);
            manifestEntry.setTime(FIXED_ENTRY_TIME);
            jos.putNextEntry(manifestEntry);
            manifest.write(jos);
            jos.closeEntry();

            Set<String> written = new LinkedHashSet<>();
            written.add("META-INF/");
            for (Map.Entry<String, JarEntrySet.Entry> e : entries.entrySet()) {
                String entryName = e.getKey();
                for (int i = entryName.indexOf('/'); i >= 0; i = entryName.indexOf('/', i + 1)) {
                    String dir = entryName.substring(0, i + 1);
                    if (written.add(dir)) {
                        JarEntry dirEntry = new JarEntry(dir);
                        dirEntry.setTime(FIXED_ENTRY_TIME);
                        jos.putNextEntry(dirEntry);
                        jos.closeEntry();
                    }
                }
                JarEntry je = new JarEntry(entryName);
                je.setTime(FIXED_ENTRY_TIME);
                jos.putNextEntry(je);
                jos.write(e.getValue().content());
                jos.closeEntry();
            }
        }
    }
}
