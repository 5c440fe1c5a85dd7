package io.flinkdevices.testkit.fake;

import io.flinkdevices.testkit.fake.internal.FakeFiles;

import org.apache.flink.annotation.PublicEvolving;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A folder tree that stands in for a part of a host's file system, such as {@code /sys}: files
 * with given contents, folders and symbolic links under one root, for drivers that read sysfs or
 * device files.
 *
 * <pre>{@code
 * FakeFileTree sys = FakeFileTree.at(tempDir.resolve("sys"))
 *         .file("class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n")
 *         .symlink("class/infiniband/mlx5_0/device", "../../../devices/pci0000:00/0000:3b:00.0")
 *         .dir("devices/pci0000:00/0000:3b:00.0");
 * // point the driver at sys.root() instead of /sys
 * }</pre>
 *
 * <p>Paths are relative to the root, separated by {@code /}, and cannot leave it. Thread-safe:
 * changes are serialized and every file is replaced in one rename, so a driver reading at the
 * same time sees the old or the new contents, never a mix.
 */
@PublicEvolving
public final class FakeFileTree {

    private final Path root;

    private FakeFileTree(Path root) {
        this.root = root;
    }

    /** A tree rooted at {@code root}, which is created if missing; existing files are kept. */
    public static FakeFileTree at(Path root) {
        Path abs = root.toAbsolutePath().normalize();
        try {
            Files.createDirectories(abs);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create fake file tree " + abs, e);
        }
        return new FakeFileTree(abs);
    }

    /** The absolute root folder: what a driver is told instead of {@code /sys}. */
    public Path root() {
        return root;
    }

    /** The absolute path of {@code relative} in this tree; the file need not exist. */
    public Path path(String relative) {
        return resolve(relative);
    }

    /**
     * Writes a file with {@code content} (UTF-8), creating its folders, replacing an existing
     * file. Sysfs files usually end with a newline; give it when the driver should see it.
     */
    public synchronized FakeFileTree file(String relative, String content) {
        FakeFiles.writeAtomically(resolve(relative), content, false);
        return this;
    }

    /** Creates a folder and its parents. */
    public synchronized FakeFileTree dir(String relative) {
        Path p = resolve(relative);
        try {
            Files.createDirectories(p);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create folder " + p, e);
        }
        return this;
    }

    /**
     * Creates a symbolic link at {@code relative} pointing at {@code target}, exactly as given:
     * relative to the link's folder (the usual sysfs form, {@code ../../devices/...}) or
     * absolute. An existing link or file at {@code relative} is replaced.
     */
    public synchronized FakeFileTree symlink(String relative, String target) {
        Path link = resolve(relative);
        try {
            Files.createDirectories(link.getParent());
            Files.deleteIfExists(link);
            Files.createSymbolicLink(link, Path.of(target));
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create link " + link + " -> " + target, e);
        }
        return this;
    }

    /** Removes a file, link or folder with everything in it; links are not followed. */
    public synchronized FakeFileTree remove(String relative) {
        FakeFiles.deleteRecursively(resolve(relative));
        return this;
    }

    /** Removes everything in the tree; the root folder stays. */
    public synchronized FakeFileTree clear() {
        FakeFiles.deleteContents(root);
        return this;
    }

    /** The contents of a file as UTF-8. */
    public String read(String relative) {
        Path p = resolve(relative);
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read fake file " + p, e);
        }
    }

    /**
     * Every regular file of the tree (links not followed), as paths relative to the root, in
     * sorted order.
     */
    public synchronized List<String> files() {
        try (Stream<Path> all = Files.walk(root)) {
            return all.filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS))
                    .map(p -> root.relativize(p).toString().replace('\\', '/'))
                    .sorted()
                    .collect(Collectors.toUnmodifiableList());
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot list fake file tree " + root, e);
        }
    }

    @Override
    public String toString() {
        return "FakeFileTree[" + root + "]";
    }

    private Path resolve(String relative) {
        if (relative == null || relative.isEmpty()) {
            throw new IllegalArgumentException("A path in a fake file tree must not be empty");
        }
        Path rel = Path.of(relative);
        if (rel.isAbsolute()) {
            throw new IllegalArgumentException(
                    "'" + relative + "' is absolute; paths in a fake file tree are relative to "
                            + root);
        }
        Path p = root.resolve(rel).normalize();
        if (!p.startsWith(root) || p.equals(root)) {
            throw new IllegalArgumentException(
                    "'" + relative + "' leaves the fake file tree " + root);
        }
        return p;
    }
}
