package io.flinkdevices.sdk.coordination.internal;

import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.host.internal.FileNode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Whether a coordination file, and the {@code .lock} file beside it, can be used: the one check
 * behind a factory's {@code coordination.file} validation (so every TaskManager, {@code discover}
 * and {@code doctor}) and the CLI's {@code quarantine list} and {@code clear}, so that all of them
 * refuse the same files with the same words: a symbolic link (coordination never follows one), a
 * folder, or a FIFO, device or socket (writes to a device vanish and opening a FIFO can hang).
 */
public final class CoordinationFileCheck {

    private CoordinationFileCheck() {}

    /**
     * Why {@code file} cannot be used as a coordination file, one sentence each without the key
     * (callers put the full key in front); empty when it and its lock file are regular files or
     * absent. Looks without following links and without opening anything.
     */
    public static List<String> problems(Path file) {
        List<String> problems = new ArrayList<>();
        if (Files.isSymbolicLink(file)) {
            problems.add(file + " is a symbolic link; coordination never follows one");
        } else if (Files.isDirectory(file, LinkOption.NOFOLLOW_LINKS)) {
            problems.add(file + " is a folder, expected a file");
        } else {
            for (Path p : List.of(file, file.resolveSibling(file.getFileName() + ".lock"))) {
                try {
                    Optional<FileNode> node = FileNode.of(p);
                    if (node.isPresent() && node.get().type() != FileNode.Type.REGULAR) {
                        problems.add(p + " is " + node.get().type().words()
                                + "; expected a regular file or no file (it is then created): writes to a device"
                                + " vanish and opening a FIFO can hang, so every TaskManager would get the same"
                                + " devices or none");
                    }
                } catch (IOException e) {
                    problems.add("cannot look at " + p + " (" + DriverParams.osReason(e) + ")");
                }
            }
        }
        return problems;
    }
}
