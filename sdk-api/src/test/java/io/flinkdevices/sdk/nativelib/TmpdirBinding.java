package io.flinkdevices.sdk.nativelib;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Stands in for a JNI binding (JOCL's {@code CL}, JCuda's {@code JCudaDriver}): its static
 * initializer "extracts" its library to a fixed file name in {@code java.io.tmpdir}, as those do,
 * and remembers where.
 */
public final class TmpdirBinding {

    /** Where the initializer put its library file. */
    public static final Path LIBRARY = extract();

    private TmpdirBinding() {}

    private static Path extract() {
        Path file = Path.of(System.getProperty("java.io.tmpdir"), "libBinding-linux-x86_64.so");
        try {
            if (!Files.exists(file)) {
                Files.writeString(file, "not really a library");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }
}
