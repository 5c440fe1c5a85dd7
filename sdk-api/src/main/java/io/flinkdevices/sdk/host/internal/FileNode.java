package io.flinkdevices.sdk.host.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Map;
import java.util.Optional;

/**
 * What is at a path, without following a symbolic link and without opening it: its type and, on
 * Linux, its device and inode (one {@code lstat}). Opening a FIFO for reading or writing blocks
 * until the other end is opened, and a character device swallows writes, so the coordination
 * files are looked at before they are opened.
 */
public final class FileNode {

    private static final int S_IFMT = 0170000;
    private static final int S_IFIFO = 0010000;
    private static final int S_IFCHR = 0020000;
    private static final int S_IFDIR = 0040000;
    private static final int S_IFBLK = 0060000;
    private static final int S_IFREG = 0100000;
    private static final int S_IFLNK = 0120000;
    private static final int S_IFSOCK = 0140000;

    private static volatile boolean unixView = true;

    /** The type of a node, as an operator would name it. */
    public enum Type {
        REGULAR("a regular file"),
        FOLDER("a folder"),
        SYMBOLIC_LINK("a symbolic link"),
        FIFO("a FIFO (named pipe)"),
        CHARACTER_DEVICE("a character device"),
        BLOCK_DEVICE("a block device"),
        SOCKET("a socket"),
        OTHER("a special file (a device, FIFO or socket)");

        private final String words;

        Type(String words) {
            this.words = words;
        }

        /** {@code a FIFO (named pipe)}, {@code a character device}, ... */
        public String words() {
            return words;
        }
    }

    private final Type type;
    private final long dev;
    private final long ino;
    private final Object fileKey;
    private String procLocksKey;

    private FileNode(Type type, long dev, long ino, Object fileKey) {
        this.type = type;
        this.dev = dev;
        this.ino = ino;
        this.fileKey = fileKey;
    }

    /**
     * The node at {@code p}; empty when nothing is there.
     *
     * @throws IOException when it cannot be looked at (a folder on the way is not searchable, ...)
     */
    public static Optional<FileNode> of(Path p) throws IOException {
        try {
            // The common case, a regular file, costs one lstat through the basic view; its file
            // key carries device and inode ("(dev=<hex>,ino=<decimal>)" on Linux and macOS).
            BasicFileAttributes b = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (b.isRegularFile()) {
                FileNode fromKey = fromFileKey(b.fileKey());
                if (fromKey != null) {
                    return Optional.of(fromKey);
                }
            }
            if (unixView) {
                try {
                    Map<String, Object> a = Files.readAttributes(p, "unix:mode,dev,ino", LinkOption.NOFOLLOW_LINKS);
                    int mode = ((Number) a.get("mode")).intValue();
                    long dev = ((Number) a.get("dev")).longValue();
                    long ino = ((Number) a.get("ino")).longValue();
                    return Optional.of(new FileNode(type(mode), dev, ino, dev + ":" + ino));
                } catch (UnsupportedOperationException | IllegalArgumentException e) {
                    unixView = false; // not Linux or macOS: the basic view below
                }
            }
            Type t =
                    b.isRegularFile()
                            ? Type.REGULAR
                            : b.isDirectory() ? Type.FOLDER : b.isSymbolicLink() ? Type.SYMBOLIC_LINK : Type.OTHER;
            return Optional.of(new FileNode(t, -1, -1, b.fileKey()));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    /** A regular file's node from a file key {@code (dev=<hex>,ino=<decimal>)}; null if it is not one. */
    private static FileNode fromFileKey(Object key) {
        if (key == null) {
            return null;
        }
        String k = key.toString();
        int comma = k.indexOf(",ino=");
        if (!k.startsWith("(dev=") || comma < 0 || !k.endsWith(")")) {
            return null;
        }
        try {
            long dev = Long.parseUnsignedLong(k.substring(5, comma), 16);
            long ino = Long.parseUnsignedLong(k.substring(comma + 5, k.length() - 1));
            return new FileNode(Type.REGULAR, dev, ino, dev + ":" + ino);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** The type an {@code st_mode} (Java's {@code unix:mode} attribute) names. */
    public static Type typeOfMode(int mode) {
        return type(mode);
    }

    private static Type type(int mode) {
        switch (mode & S_IFMT) {
            case S_IFREG:
                return Type.REGULAR;
            case S_IFDIR:
                return Type.FOLDER;
            case S_IFLNK:
                return Type.SYMBOLIC_LINK;
            case S_IFIFO:
                return Type.FIFO;
            case S_IFCHR:
                return Type.CHARACTER_DEVICE;
            case S_IFBLK:
                return Type.BLOCK_DEVICE;
            case S_IFSOCK:
                return Type.SOCKET;
            default:
                return Type.OTHER;
        }
    }

    private static String hex2(long v) {
        String h = Long.toHexString(v);
        return h.length() < 2 ? "0" + h : h;
    }

    public Type type() {
        return type;
    }

    /** Whether both name the same file (device and inode); false when either is unknown. */
    public boolean sameFile(FileNode other) {
        return other != null && fileKey != null && fileKey.equals(other.fileKey);
    }

    /**
     * The file as {@code /proc/locks} names it: {@code <major hex>:<minor hex>:<inode>}; empty
     * where device and inode are unknown.
     */
    public Optional<String> procLocksKey() {
        if (dev < 0 || ino < 0) {
            return Optional.empty();
        }
        String key = procLocksKey;
        if (key == null) {
            // glibc's gnu_dev_major / gnu_dev_minor; the kernel prints "%02x:%02x:%lu"
            long major = ((dev >>> 8) & 0xfffL) | ((dev >>> 32) & ~0xfffL);
            long minor = (dev & 0xffL) | ((dev >>> 12) & ~0xffL);
            key = hex2(major) + ":" + hex2(minor) + ":" + ino;
            procLocksKey = key;
        }
        return Optional.of(key);
    }
}
