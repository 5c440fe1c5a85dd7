package io.flinkdevices.sdk.coordination.internal;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.host.internal.FileNode;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The two paths of a coordination file and what may stand at them: only a regular file, or no
 * file, is accepted at either path; a symbolic link, FIFO, device, socket or folder is refused
 * with the full config key, and nothing is opened before it has been looked at ({@code lstat}).
 * Files this class creates get the configured mode exactly ({@code 0600}, or {@code 0660} when
 * the group shares them). Every error starts with the config key that named the file.
 */
final class SafeFile {

    private final Path file;
    private final Path lockFile;
    private final String fileKey;
    private final Set<PosixFilePermission> permissions;
    private final boolean posix;

    SafeFile(Path file, boolean groupShared, String fileKey) {
        this.file = file.toAbsolutePath().normalize();
        this.lockFile = this.file.resolveSibling(this.file.getFileName().toString() + ".lock");
        this.fileKey = Objects.requireNonNull(fileKey);
        this.permissions = PosixFilePermissions.fromString(groupShared ? "rw-rw----" : "rw-------");
        this.posix = this.file.getFileSystem().supportedFileAttributeViews().contains("posix");
    }

    /** The records file. */
    Path file() {
        return file;
    }

    /** The lock file: {@code file + ".lock"}. */
    Path lockFile() {
        return lockFile;
    }

    /** The full config key that named the file. */
    String fileKey() {
        return fileKey;
    }

    /** The mode a created file gets, as an attribute for {@code open}; none off POSIX. */
    FileAttribute<?>[] permissionAttribute() {
        if (!posix) {
            return new FileAttribute<?>[0];
        }
        return new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(permissions)};
    }

    /** Sets the configured mode exactly: the umask may have removed the group bits. */
    void applyPermissions(Path p) throws IOException {
        // The umask never removes owner bits, only the group bits of 0660.
        if (posix && permissions.contains(PosixFilePermission.GROUP_WRITE)) {
            Files.setPosixFilePermissions(p, permissions);
        }
    }

    /** What is at {@code p}, never following a link; empty when nothing is. */
    Optional<FileNode> look(Path p, String what) throws DeviceDriverException {
        try {
            return FileNode.of(p);
        } catch (IOException e) {
            throw ioFailure("cannot look at " + what + " " + p, p, e);
        }
    }

    /** Refuses anything at {@code p} but a regular file, naming what it is. */
    void refuseNonRegular(Path p, FileNode node, String what) throws DeviceDriverException {
        if (node.type() == FileNode.Type.REGULAR) {
            return;
        }
        if (node.type() == FileNode.Type.SYMBOLIC_LINK) {
            refuseLink(p);
        }
        throw new DeviceDriverException(
                fileKey
                        + ": "
                        + what
                        + " "
                        + p
                        + " is "
                        + node.type().words()
                        + "; expected a regular file or no file (it is then created). Writes to a"
                        + " device vanish and opening a FIFO can hang, so every TaskManager would get"
                        + " the same devices or none: remove it, or point "
                        + fileKey
                        + " at a file in a folder only TaskManagers can write");
    }

    /** Refuses {@code p} if it is a symbolic link now, naming its target. */
    void refuseLink(Path p) throws DeviceDriverException {
        BasicFileAttributes attrs;
        try {
            attrs = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            return; // missing: it is created without following anything
        }
        if (attrs.isSymbolicLink()) {
            String target;
            try {
                target = " -> " + Files.readSymbolicLink(p);
            } catch (IOException e) {
                target = "";
            }
            throw new DeviceDriverException(
                    fileKey
                            + ": coordination file "
                            + p
                            + " is a symbolic link"
                            + target
                            + "; refusing to follow it (someone may be redirecting writes). Remove it"
                            + " or point "
                            + fileKey
                            + " at a regular file in a folder only TaskManagers can write");
        }
    }

    /** The error for a failed file operation: the key, what failed, the OS reason, who may fix it. */
    DeviceDriverException ioFailure(String what, Path p, IOException e) {
        String reason = DriverParams.osReason(e);
        if (e instanceof FileSystemException
                && String.valueOf(((FileSystemException) e).getReason()).contains("symbolic link")) {
            reason = p + " became a symbolic link; refusing to follow it";
        }
        String expected =
                e instanceof AccessDeniedException
                        ? "; expected a file and folder that user "
                                + System.getProperty("user.name")
                                + " may read and write"
                                + ownerAndMode(p)
                        : "";
        return new DeviceDriverException(fileKey + ": " + what + ": " + reason + expected, e);
    }

    private static String ownerAndMode(Path p) {
        Path at = Files.exists(p, LinkOption.NOFOLLOW_LINKS) ? p : p.getParent();
        try {
            return " (" + at + " is owned by "
                    + Files.getOwner(at, LinkOption.NOFOLLOW_LINKS).getName()
                    + ", mode "
                    + PosixFilePermissions.toString(Files.getPosixFilePermissions(at, LinkOption.NOFOLLOW_LINKS))
                    + ")";
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    static void closeQuietly(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // nothing was pending
        }
    }
}
