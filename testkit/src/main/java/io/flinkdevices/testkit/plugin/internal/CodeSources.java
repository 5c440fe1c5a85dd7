package io.flinkdevices.testkit.plugin.internal;

import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.Comparator;
import java.util.stream.Stream;

/** Where classes come from on this class path, and clearing a folder for a plugin. */
public final class CodeSources {

    private CodeSources() {}

    /**
     * The folder or jar a class was loaded from.
     *
     * @throws IllegalArgumentException when it has none, or one that is not a local file
     */
    public static Path codeSourceOf(Class<?> type) {
        CodeSource cs = type.getProtectionDomain().getCodeSource();
        URL location = cs == null ? null : cs.getLocation();
        if (location == null) {
            throw new IllegalArgumentException(
                    "cannot tell where "
                            + type.getName()
                            + " was loaded from (no code source); only classes from a folder or"
                            + " jar on the class path can be bundled");
        }
        Path path;
        try {
            path = Path.of(location.toURI());
        } catch (URISyntaxException | RuntimeException e) {
            throw new IllegalArgumentException(
                    "cannot read "
                            + type.getName()
                            + "'s code source "
                            + location
                            + ": only classes from a local folder or jar can be bundled",
                    e);
        }
        if (!Files.exists(path)) {
            throw new IllegalArgumentException(
                    type.getName() + " was loaded from " + path + ", which does not exist");
        }
        return path;
    }

    /** Deletes {@code folder} and everything in it; nothing when it does not exist. */
    public static void deleteRecursively(Path folder) throws IOException {
        if (!Files.exists(folder)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(folder)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toArray(Path[]::new)) {
                Files.delete(p);
            }
        }
    }
}
