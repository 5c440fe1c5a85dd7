package io.flinkdevices.sdk.host;

import org.apache.flink.annotation.PublicEvolving;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Objects;

/**
 * The outcome of reading one file of {@link HostFiles#readEach}: its content, or the exception that
 * {@link HostFiles#read} would have thrown for it.
 *
 * <pre>{@code
 * for (HostFileRead r : HostFiles.readEach(files, 4096)) {
 *     byte[] content = r.bytes(); // throws NoSuchFileException, RefusedFileException, ...
 * }
 * }</pre>
 */
@PublicEvolving
public final class HostFileRead {

    private final Path file;
    private final byte[] bytes;
    private final IOException failure;

    private HostFileRead(Path file, byte[] bytes, IOException failure) {
        this.file = Objects.requireNonNull(file);
        this.bytes = bytes;
        this.failure = failure;
    }

    static HostFileRead of(Path file, byte[] bytes) {
        return new HostFileRead(file, Objects.requireNonNull(bytes), null);
    }

    static HostFileRead failed(Path file, IOException failure) {
        return new HostFileRead(file, null, Objects.requireNonNull(failure));
    }

    /** The file that was read. */
    public Path file() {
        return file;
    }

    /**
     * The whole content.
     *
     * @throws java.nio.file.NoSuchFileException when nothing was at the path
     * @throws HostFiles.RefusedFileException when it was refused (not a regular file, too large, not
     *     opened in time)
     * @throws IOException with the operating system's reason when it could not be read
     */
    public byte[] bytes() throws IOException {
        if (failure != null) {
            throw failure;
        }
        return bytes.clone();
    }

    /** The exception {@link #bytes()} throws; null when the file was read. */
    public IOException failure() {
        return failure;
    }

    @Override
    public String toString() {
        return file + (failure == null ? ": " + bytes.length + " bytes" : ": " + failure.getMessage());
    }
}
