package io.flinkdevices.sdk.nativelib;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Stands in for JNA's {@code Native}: its static initializer looks for its library in the folder
 * that a system property names (JNA's {@code jna.boot.library.path}), as JNA does before it
 * unpacks its own, and remembers what it found.
 */
public final class BootPathBinding {

    /** The property it reads. */
    public static final String PROPERTY = "flink-devices.test.boot.library.path";

    /** The property's value while the initializer ran, or null. */
    public static final String FOLDER = System.getProperty(PROPERTY);

    /** The content of {@code libdispatch-standin.so} in that folder, or null when there was none. */
    public static final String LIBRARY = read();

    private BootPathBinding() {}

    private static String read() {
        if (FOLDER == null) {
            return null;
        }
        Path file = Path.of(FOLDER, "libdispatch-standin.so");
        try {
            return Files.exists(file) ? Files.readString(file) : null;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
