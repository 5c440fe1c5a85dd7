package io.flinkdevices.fpga;

import io.flinkdevices.sdk.host.HostFiles;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The program every offered device must load: a bitstream or other binary ({@code .aocx},
 * {@code .xclbin}, {@code .awsxclbin}, anything but {@code .cl}), created with {@code
 * clCreateProgramWithBinary}; or OpenCL C source ({@code .cl}, for emulators and CPU devices),
 * created with {@code clCreateProgramWithSource}. Either is then built with {@code
 * clBuildProgram} and the build options.
 */
final class ProgramFile {

    final Path path;
    final boolean source;
    final String buildOptions;
    /** The parameter that named the file, for messages. */
    final String key;

    ProgramFile(Path path, String buildOptions, String key) {
        this.path = path;
        this.source = path.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".cl");
        this.buildOptions = buildOptions == null ? "" : buildOptions;
        this.key = key;
    }

    /** The largest program read: far above any bitstream, far below a Java array's limit. */
    static final int MAX_BYTES = 1 << 30;

    /**
     * The file's bytes; read each time, so a replaced bitstream is what gets loaded. A FIFO or
     * folder put at the path (also after the factory looked at it) is refused, never waited on.
     */
    byte[] bytes() throws IOException {
        try {
            return HostFiles.read(path, MAX_BYTES);
        } catch (OutOfMemoryError e) {
            throw tooLarge(e);
        }
    }

    /** The file's text, for source programs. */
    String text() throws IOException {
        try {
            return new String(bytes(), StandardCharsets.UTF_8);
        } catch (OutOfMemoryError e) {
            throw tooLarge(e);
        }
    }

    /**
     * A program larger than the heap can hold: one allocation failed, the heap is otherwise as it
     * was, so it is this program's error, not the TaskManager's.
     */
    private static IOException tooLarge(OutOfMemoryError e) {
        return new IOException("it does not fit in the TaskManager's heap (" + (Runtime.getRuntime().maxMemory() >> 20)
                + " MiB at most): raise taskmanager.memory.task.heap.size, or load a smaller program", e);
    }

    @Override
    public String toString() {
        return (source ? "OpenCL C source " : "program binary ") + path + " (" + key + ")";
    }
}
