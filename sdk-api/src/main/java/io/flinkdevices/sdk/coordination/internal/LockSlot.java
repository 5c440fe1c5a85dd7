package io.flinkdevices.sdk.coordination.internal;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.internal.FileNode;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The lock file of one path as this class loader holds it open, and the records file kept open
 * beside it between transactions.
 *
 * <p>POSIX locks belong to the process, not the channel, and closing any channel on the file
 * drops every lock the process holds on it. So each lock file is opened once per class loader
 * (one slot per real lock file, however the path was spelled) and kept open, and threads of one
 * JVM queue on the slot's {@link ReentrantLock} before they touch the file lock.
 */
final class LockSlot {

    private static final Map<Path, LockSlot> SLOTS = new ConcurrentHashMap<>();

    /** Threads of this class loader queue here before they lock the file. */
    final ReentrantLock mutex = new ReentrantLock();

    /** The lock file; {@code null} or closed when it must be opened again. */
    FileChannel channel;
    /** What the lock file was when it was opened. */
    FileNode node;
    /** The records file, kept open between transactions while its path names it. */
    FileChannel dataChannel;
    /** What the records file was when it was opened. */
    FileNode dataNode;
    /** The records file's content and lines as last read or written under the lock; may be null. */
    RecordFormat.Layout lastLayout;

    private LockSlot() {}

    /** The slot of the lock file whose real path is {@code key}. */
    static LockSlot of(Path key) {
        return SLOTS.computeIfAbsent(key, k -> new LockSlot());
    }

    /** Opens the lock file if it is not open yet; only called with {@link #mutex} held. */
    FileChannel open(SafeFile files) throws DeviceDriverException {
        if (channel != null && channel.isOpen()) {
            return channel;
        }
        Path lockFile = files.lockFile();
        Optional<FileNode> there = files.look(lockFile, "coordination lock file");
        if (there.isPresent()) {
            files.refuseNonRegular(lockFile, there.get(), "coordination lock file");
        }
        try {
            try {
                channel =
                        FileChannel.open(
                                lockFile,
                                Set.of(
                                        StandardOpenOption.CREATE_NEW,
                                        StandardOpenOption.READ,
                                        StandardOpenOption.WRITE,
                                        LinkOption.NOFOLLOW_LINKS),
                                files.permissionAttribute());
                files.applyPermissions(lockFile);
            } catch (FileAlreadyExistsException e) {
                // O_RDWR: never blocks, not even on a FIFO put there since the look above.
                channel =
                        FileChannel.open(
                                lockFile,
                                StandardOpenOption.READ,
                                StandardOpenOption.WRITE,
                                LinkOption.NOFOLLOW_LINKS);
            }
            node = FileNode.of(lockFile).orElse(null);
            if (node != null && node.type() != FileNode.Type.REGULAR) {
                FileNode odd = node;
                close();
                files.refuseNonRegular(lockFile, odd, "coordination lock file");
            }
            return channel;
        } catch (NoSuchFileException e) {
            close();
            throw new DeviceDriverException(
                    files.fileKey()
                            + ": cannot create coordination lock file "
                            + lockFile
                            + ": folder "
                            + lockFile.getParent()
                            + " does not exist",
                    e);
        } catch (IOException e) {
            close();
            files.refuseLink(lockFile);
            throw files.ioFailure("cannot open coordination lock file " + lockFile, lockFile, e);
        }
    }

    /** Whether the path still names the lock file that was opened (not deleted, not replaced). */
    boolean stillCurrent(Path lockFile) {
        try {
            Optional<FileNode> now = FileNode.of(lockFile);
            return node == null || (now.isPresent() && node.sameFile(now.get()));
        } catch (IOException e) {
            return false;
        }
    }

    /** Closes the kept records file, so that the next transaction opens it afresh. */
    void closeData() {
        if (dataChannel != null) {
            SafeFile.closeQuietly(dataChannel);
        }
        dataChannel = null;
        dataNode = null;
    }

    /** Closes the lock file, which releases this process's lock on it for certain. */
    void close() {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // nothing more to release
            }
        }
        channel = null;
        node = null;
    }
}
