package io.flinkdevices.testkit.contract.internal;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;

/** Reads {@code META-INF/services} files the way {@link java.util.ServiceLoader} does. */
public final class ServiceFiles {

    private ServiceFiles() {}

    /** The resource name of the services file of {@code service}. */
    public static String resourceName(Class<?> service) {
        return "META-INF/services/" + service.getName();
    }

    /** The class path entry (folder or jar) {@code type} was loaded from. */
    public static Path codeSourceOf(Class<?> type) {
        CodeSource source = type.getProtectionDomain().getCodeSource();
        if (source == null || source.getLocation() == null) {
            throw new IllegalStateException(
                    type.getName() + " has no code source: it was not loaded from a jar or folder");
        }
        try {
            return Path.of(source.getLocation().toURI());
        } catch (URISyntaxException | IllegalArgumentException e) {
            throw new IllegalStateException(
                    "Cannot turn the code source " + source.getLocation() + " into a path", e);
        }
    }

    /**
     * The provider names listed in {@code service}'s services file inside {@code entry} (a folder
     * or jar), in order, duplicates kept; empty when there is no such file.
     */
    public static List<String> entriesIn(Path entry, Class<?> service) {
        String resource = resourceName(service);
        try {
            if (Files.isDirectory(entry)) {
                Path file = entry.resolve(resource);
                if (!Files.isRegularFile(file)) {
                    return List.of();
                }
                try (InputStream in = Files.newInputStream(file)) {
                    return parse(in);
                }
            }
            try (JarFile jar = new JarFile(entry.toFile())) {
                ZipEntry e = jar.getEntry(resource);
                if (e == null) {
                    return List.of();
                }
                try (InputStream in = jar.getInputStream(e)) {
                    return parse(in);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read " + resource + " in " + entry, e);
        }
    }

    /** Every services file of {@code service} visible to {@code loader} that lists {@code name}. */
    public static List<String> filesListing(ClassLoader loader, Class<?> service, String name) {
        List<String> found = new ArrayList<>();
        try {
            for (URL url : Collections.list(loader.getResources(resourceName(service)))) {
                try (InputStream in = url.openStream()) {
                    for (String provider : parse(in)) {
                        if (provider.equals(name)) {
                            found.add(url.toString());
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot list " + resourceName(service), e);
        }
        return found;
    }

    private static List<String> parse(InputStream in) throws IOException {
        List<String> names = new ArrayList<>();
        BufferedReader reader =
                new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        String line;
        while ((line = reader.readLine()) != null) {
            int hash = line.indexOf('#');
            String name = (hash >= 0 ? line.substring(0, hash) : line).trim();
            if (!name.isEmpty()) {
                names.add(name);
            }
        }
        return names;
    }
}
