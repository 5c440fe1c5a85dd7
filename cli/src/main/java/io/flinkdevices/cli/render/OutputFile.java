package io.flinkdevices.cli.render;

import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A file a {@code render} option names ({@code --pod-template}, {@code -o}, {@code
 * --resource-types}, ...): checked before anything is rendered, and written with the option, the
 * file and the operating system's reason in every error, never a stack trace.
 */
final class OutputFile {

    /** Exit code of a render command whose output file cannot be written. */
    static final int EXIT_UNWRITABLE = 4;

    private final String option;
    private final Path file;

    private OutputFile(String option, Path file) {
        this.option = option;
        this.file = file;
    }

    /** The option's file as given, or {@code null} when the option was not given. */
    static OutputFile of(String option, Path given) throws Unwritable {
        if (given == null) {
            return null;
        }
        if (given.toString().isBlank()) {
            throw new Unwritable(option + ": empty path; expected a FILE to write");
        }
        OutputFile out = new OutputFile(option, given.toAbsolutePath().normalize());
        if (Files.isDirectory(out.file)) {
            throw new Unwritable(out.prefix() + "is a folder; expected a FILE to write");
        }
        return out;
    }

    /**
     * Refuses two options naming one file (also through a link): one of them would silently
     * overwrite the other.
     *
     * @throws ParameterException naming both options and the file
     */
    static void refuseSharedPaths(CommandLine commandLine, List<OutputFile> files) {
        List<OutputFile> given = new ArrayList<>();
        for (OutputFile f : files) {
            if (f != null) {
                given.add(f);
            }
        }
        for (int i = 0; i < given.size(); i++) {
            for (int j = i + 1; j < given.size(); j++) {
                OutputFile a = given.get(i);
                OutputFile b = given.get(j);
                if (a.canonical().equals(b.canonical())) {
                    throw new ParameterException(
                            commandLine,
                            a.option
                                    + " and "
                                    + b.option
                                    + " both name "
                                    + a.file
                                    + "; each file needs its own path (one would overwrite the"
                                    + " other)");
                }
            }
        }
    }

    /** The absolute file. */
    Path file() {
        return file;
    }

    /**
     * Writes {@code content}, creating missing parent folders.
     *
     * @throws Unwritable naming the option, the file and the operating system's reason
     */
    void write(String content) throws Unwritable {
        try {
            Path parent = file.getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Files.writeString(file, content, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new Unwritable(prefix() + "cannot write it: " + reason(e));
        }
    }

    private String prefix() {
        return option + " " + file + ": ";
    }

    /** The path with links resolved as far as they exist, so two spellings of one file compare equal. */
    private Path canonical() {
        try {
            if (Files.exists(file)) {
                return file.toRealPath();
            }
            Path parent = file.getParent();
            if (parent != null && Files.exists(parent)) {
                return parent.toRealPath().resolve(file.getFileName());
            }
        } catch (IOException e) {
            // compare as given
        }
        return file;
    }

    /** The operating system's words for a failed write ({@code No space left on device}, ...). */
    static String reason(IOException e) {
        if (e instanceof FileSystemException) {
            FileSystemException f = (FileSystemException) e;
            String where = f.getFile() == null ? "" : " (" + f.getFile() + ")";
            if (f.getReason() != null) {
                return f.getReason() + where;
            }
            if (e instanceof NoSuchFileException) {
                return "No such file or directory" + where;
            }
            if (e instanceof AccessDeniedException) {
                return "Permission denied" + where;
            }
            if (e instanceof NotDirectoryException) {
                return "Not a directory" + where;
            }
            if (e instanceof FileAlreadyExistsException) {
                // from creating the parent folders: a file is where a folder has to be
                return "Not a directory" + where;
            }
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    /** An output file that cannot be written; its message is the one line the operator sees. */
    static final class Unwritable extends Exception {
        private static final long serialVersionUID = 1L;

        Unwritable(String message) {
            super(message);
        }
    }
}
