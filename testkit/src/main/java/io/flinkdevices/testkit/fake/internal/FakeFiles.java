package io.flinkdevices.testkit.fake.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/** File operations the fakes share: atomic replacement and recursive deletion. */
public final class FakeFiles {

    private static final AtomicLong TEMP_COUNTER = new AtomicLong();

    private FakeFiles() {}

    /**
     * Replaces {@code target} with {@code content} in one rename, so that a reader running at the
     * same time (a driver, a fake executable) sees the old or the new file, never half of one.
     */
    public static void writeAtomically(Path target, byte[] content, boolean executable) {
        Path parent = target.toAbsolutePath().getParent();
        Path temp =
                parent.resolve(
                        "." + target.getFileName() + ".tmp-" + TEMP_COUNTER.incrementAndGet());
        try {
            Files.createDirectories(parent);
            Files.write(temp, content);
            if (executable) {
                Files.setPosixFilePermissions(
                        temp,
                        Set.of(
                                PosixFilePermission.OWNER_READ,
                                PosixFilePermission.OWNER_WRITE,
                                PosixFilePermission.OWNER_EXECUTE,
                                PosixFilePermission.GROUP_READ,
                                PosixFilePermission.GROUP_EXECUTE,
                                PosixFilePermission.OTHERS_READ,
                                PosixFilePermission.OTHERS_EXECUTE));
            }
            try {
                Files.move(
                        temp,
                        target,
                        StandardCopyOption.ATOMIC_MOVE,
                        StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            try {
                Files.deleteIfExists(temp);
            } catch (IOException ignored) {
                // the original failure is the one worth reporting
            }
            throw new UncheckedIOException("Cannot write fake file " + target, e);
        }
    }

    /** {@link #writeAtomically(Path, byte[], boolean)} for UTF-8 text. */
    public static void writeAtomically(Path target, String content, boolean executable) {
        writeAtomically(target, content.getBytes(StandardCharsets.UTF_8), executable);
    }

    /** Deletes {@code path} and everything below it; symbolic links are deleted, not followed. */
    public static void deleteRecursively(Path path) {
        if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try {
            Files.walkFileTree(
                    path,
                    new SimpleFileVisitor<>() {
                        @Override
                        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                                throws IOException {
                            Files.delete(file);
                            return FileVisitResult.CONTINUE;
                        }

                        @Override
                        public FileVisitResult postVisitDirectory(Path dir, IOException e)
                                throws IOException {
                            if (e != null) {
                                throw e;
                            }
                            Files.delete(dir);
                            return FileVisitResult.CONTINUE;
                        }
                    });
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot delete " + path, e);
        }
    }

    /** Deletes everything below {@code folder} but keeps the folder itself. */
    public static void deleteContents(Path folder) {
        if (!Files.isDirectory(folder, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (var children = Files.list(folder)) {
            for (Path child : (Iterable<Path>) children::iterator) {
                deleteRecursively(child);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot empty " + folder, e);
        }
    }
}
