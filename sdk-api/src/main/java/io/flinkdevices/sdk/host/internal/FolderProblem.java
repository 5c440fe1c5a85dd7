package io.flinkdevices.sdk.host.internal;

import io.flinkdevices.sdk.internal.OsReason;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Optional;

/** Why a path is not a folder that can be listed, in the operating system's words. */
public final class FolderProblem {

    private FolderProblem() {}

    /**
     * Empty when {@code dir} is a folder; otherwise a phrase that follows the path: a dangling
     * link, a symbolic link loop, a file and a folder that cannot be read are each named as such.
     */
    public static Optional<String> of(Path dir) {
        BasicFileAttributes attrs;
        try {
            attrs = Files.readAttributes(dir, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
            if (Files.isSymbolicLink(dir)) {
                String target;
                try {
                    target = String.valueOf(Files.readSymbolicLink(dir));
                } catch (IOException ex) {
                    target = "?";
                }
                return Optional.of("is a symbolic link to " + target + ", which does not exist");
            }
            return Optional.of("does not exist");
        } catch (IOException e) {
            String reason = OsReason.of(e);
            boolean loop = reason.contains("symbolic links");
            return Optional.of("cannot be opened (" + reason + (loop ? ": a symbolic link loop" : "") + ")");
        }
        if (!attrs.isDirectory()) {
            return Optional.of("is not a folder but a " + (attrs.isRegularFile() ? "file" : "special file"));
        }
        return Optional.empty();
    }
}
