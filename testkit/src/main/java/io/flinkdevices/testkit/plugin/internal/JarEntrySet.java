package io.flinkdevices.testkit.plugin.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * The files that go into one plugin jar, sorted by name so that the jar is reproducible, each
 * with where it came from. The same file from two sources is kept once; two different files of
 * one name are refused, naming both sources.
 */
public final class JarEntrySet {

    /** One file's content and where it came from. */
    public static final class Entry {
        private final byte[] content;
        private final String source;

        Entry(byte[] content, String source) {
            this.content = content;
            this.source = source;
        }

        /** The bytes (not copied: nobody outside this package changes them). */
        public byte[] content() {
            return content;
        }

        /** Where the file came from, for messages. */
        public String source() {
            return source;
        }
    }

    private final Map<String, Entry> entries = new TreeMap<>();

    /** Whether nothing was added. */
    public boolean isEmpty() {
        return entries.isEmpty();
    }

    /** The entries by name, sorted. */
    public Map<String, Entry> entries() {
        return Collections.unmodifiableMap(entries);
    }

    /** A new entry of {@code content} from {@code source}. */
    public static Entry entry(byte[] content, String source) {
        return new Entry(content, source);
    }

    /**
     * Adds every file under {@code prefix} (a package path such as {@code io/flinkdevices/sdk/})
     * of a classes folder or jar.
     *
     * @throws UncheckedIOException when {@code codeSource} cannot be read
     * @throws IllegalArgumentException when it holds no file under {@code prefix}
     */
    public void addTree(Path codeSource, String prefix) {
        int before = entries.size();
        try {
            if (Files.isDirectory(codeSource)) {
                addFolder(codeSource, prefix);
            } else {
                addJar(codeSource, prefix);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "cannot read " + prefix + "** from " + codeSource + ": " + e.getMessage(), e);
        }
        if (entries.size() == before && entries.keySet().stream().noneMatch(k -> k.startsWith(prefix))) {
            throw new IllegalArgumentException("found no files under " + prefix + " in " + codeSource);
        }
    }

    private void addFolder(Path codeSource, String prefix) throws IOException {
        Path root = codeSource.resolve(prefix);
        if (!Files.isDirectory(root)) {
            return;
        }
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file :
                    files.filter(Files::isRegularFile)
                            .sorted(Comparator.comparing(Path::toString))
                            .toArray(Path[]::new)) {
                String entryName = codeSource.relativize(file).toString().replace('\\', '/');
                put(entryName, Files.readAllBytes(file), codeSource.toString());
            }
        }
    }

    private void addJar(Path codeSource, String prefix) throws IOException {
        try (JarFile jarFile = new JarFile(codeSource.toFile())) {
            Enumeration<JarEntry> jarEntries = jarFile.entries();
            while (jarEntries.hasMoreElements()) {
                JarEntry je = jarEntries.nextElement();
                if (!je.isDirectory() && je.getName().startsWith(prefix)) {
                    try (InputStream in = jarFile.getInputStream(je)) {
                        put(je.getName(), in.readAllBytes(), codeSource.toString());
                    }
                }
            }
        }
    }

    /**
     * Adds one file; a manifest is skipped (the jar writer makes its own).
     *
     * @throws IllegalArgumentException when a different file of that name came from elsewhere
     */
    public void put(String entryName, byte[] content, String source) {
        if (entryName.equalsIgnoreCase(JarFile.MANIFEST_NAME)) {
            return;
        }
        Entry previous = entries.get(entryName);
        if (previous != null) {
            if (Arrays.equals(previous.content, content)) {
                return;
            }
            throw new IllegalArgumentException(
                    "two different files named "
                            + entryName
                            + ": one from "
                            + previous.source
                            + ", one from "
                            + source);
        }
        entries.put(entryName, new Entry(content, source));
    }
}
