package io.flinkdevices.sdk.config.internal;

import io.flinkdevices.sdk.host.HostFiles;
import io.flinkdevices.sdk.internal.OsReason;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;

/**
 * What is wrong with the file a path parameter names, as one phrase an operator can act on: the
 * path, what is wrong, what was expected, and the operating system's reason where it gave one.
 * The checks behind {@code DriverParams.fileProblem}.
 */
public final class FileChecks {

    /** What a path must name. */
    public enum Wanted {
        /** Any file or folder. */
        ANYTHING("a file or folder"),
        /** A regular file this process may read. */
        READABLE_FILE("a readable file"),
        /** A regular file this process may execute. */
        EXECUTABLE_FILE("an executable file");

        private final String words;

        Wanted(String words) {
            this.words = words;
        }
    }

    private FileChecks() {}

    /** Why {@code path} is not what {@code wanted} asks for; empty when it is. */
    public static Optional<String> problem(Path path, Wanted wanted) {
        String expected = wanted.words;
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(path, BasicFileAttributes.class);
        } catch (IOException e) {
            String what =
                    e instanceof NoSuchFileException
                            ? (wanted == Wanted.ANYTHING ? "no such file or folder " : "no such file ") + path
                            : path + " cannot be read";
            return Optional.of(what + "; expected " + expected + " (" + OsReason.of(e) + ")");
        }
        if (wanted == Wanted.ANYTHING) {
            return Optional.empty();
        }
        if (attributes.isDirectory()) {
            return Optional.of(path + " is a folder; expected " + expected);
        }
        if (!attributes.isRegularFile()) {
            return Optional.of(path + " is not a regular file (a device or pipe); expected " + expected);
        }
        if (wanted == Wanted.EXECUTABLE_FILE) {
            return Files.isExecutable(path)
                    ? Optional.empty()
                    : Optional.of("file " + path + " is not executable (" + mode(path) + "); expected "
                            + expected + " (chmod +x)");
        }
        try {
            // not a plain open: a FIFO swapped in since the look above would block it
            HostFiles.checkReadable(path);
            return Optional.empty();
        } catch (HostFiles.RefusedFileException e) {
            return Optional.of(e.getMessage() + "; expected " + expected);
        } catch (IOException e) {
            return Optional.of("file " + path + " is not readable; expected " + expected + " (" + OsReason.of(e) + ")");
        }
    }

    private static String mode(Path path) {
        try {
            return "mode " + PosixFilePermissions.toString(Files.getPosixFilePermissions(path));
        } catch (IOException | UnsupportedOperationException e) {
            return "no execute permission";
        }
    }
}
