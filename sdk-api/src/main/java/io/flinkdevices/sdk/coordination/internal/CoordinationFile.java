package io.flinkdevices.sdk.coordination.internal;

import io.flinkdevices.sdk.DeviceDriverException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.FileLockInterruptionException;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A coordination file and its lock: {@code <file>} holds the records, {@code <file>.lock} is the
 * stable file whose POSIX record lock ({@link FileChannel#tryLock()}) serializes every reader and
 * writer on the host.
 *
 * <p>Why it is built this way:
 *
 * <ul>
 *   <li>Records are replaced in place by one positioned write of the whole new content, padded
 *       with a comment line to the old length when it is shorter, then the file is truncated to
 *       the content. That one write is the commit point: a process killed before it leaves the
 *       previous content, one killed after it leaves the new content followed at most by
 *       comment padding, never a fragment of an old line that could read as a record. A torn
 *       write (a full disk while the file grows) can only cut the records this write appends,
 *       whose allocation then fails; {@link RecordFormat} drops or keeps a torn last line so
 *       that it never frees a held device. Writing in place costs one open, one write and one
 *       truncate, where replacing through a temporary file and a rename cost several times more
 *       on ext4 (which flushes a file renamed over another), and it works in a sticky folder
 *       such as {@code /tmp} where another user's file may be written but not replaced. The
 *       lock lives on a separate, stable file. No {@code fsync}: after a power loss every owner
 *       is dead anyway (and records of an earlier boot are reclaimed).
 *   <li>POSIX locks belong to the process, not the channel, and closing any channel on the file
 *       drops every lock the process holds on it. So each lock file is opened once per class
 *       loader and kept open, threads of one JVM queue on a {@link ReentrantLock} first, and a
 *       second class loader (another plugin) sees {@link OverlappingFileLockException}, which
 *       counts as "held".
 *   <li>Waiting is bounded: a waiter blocks in {@link FileChannel#lock()} (the kernel wakes it
 *       the moment the holder unlocks, so no waiter starves behind pollers) and a watchdog
 *       interrupts it at the timeout, which closes the channel; it is reopened on the next use.
 *       The holder writes its PID into the lock file so that a waiter that gives up can name it.
 *   <li>Symbolic links are refused at both paths (checked, and opened with {@code O_NOFOLLOW}),
 *       since the default folder is world-writable.
 * </ul>
 */
public final class CoordinationFile {

    private static final Logger LOG = LoggerFactory.getLogger(CoordinationFile.class);

    private static final Map<Path, Slot> SLOTS = new ConcurrentHashMap<>();
    private static final long MIN_BACKOFF_NANOS = TimeUnit.MICROSECONDS.toNanos(50);
    private static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    /** The holder line is padded to this size so that it is replaced by one write, never truncated. */
    private static final int HOLDER_LINE = 64;

    private static final ScheduledThreadPoolExecutor WATCHDOG = watchdog();

    private final Path file;
    private final Path lockFile;
    private final Duration lockTimeout;
    private final Set<PosixFilePermission> permissions;
    private final boolean posix;
    private volatile Path lockKey;

    /**
     * @param file the records file; its lock is {@code file + ".lock"}
     * @param lockTimeout how long to wait for the lock
     * @param groupShared whether the group may read and write ({@code 0660}), else {@code 0600}
     */
    public CoordinationFile(Path file, Duration lockTimeout, boolean groupShared) {
        this.file = file.toAbsolutePath().normalize();
        this.lockFile = sibling(this.file, ".lock");
        this.lockTimeout = Objects.requireNonNull(lockTimeout);
        this.permissions = PosixFilePermissions.fromString(groupShared ? "rw-rw----" : "rw-------");
        this.posix = this.file.getFileSystem().supportedFileAttributeViews().contains("posix");
    }

    private static Path sibling(Path file, String suffix) {
        return file.resolveSibling(file.getFileName().toString() + suffix);
    }

    public Path file() {
        return file;
    }

    public Path lockFile() {
        return lockFile;
    }

    /** Work done while holding the lock. */
    @FunctionalInterface
    public interface Transaction<T> {
        T run(Locked locked) throws DeviceDriverException;
    }

    /** The file as seen under the lock. */
    public interface Locked {
        /** What the file held when the lock was taken. */
        RecordFormat.Parsed content();

        /** Replaces the records. */
        void write(List<DeviceRecord> records) throws DeviceDriverException;
    }

    /** Runs {@code tx} under the lock, waiting at most the lock timeout for it. */
    public <T> T transact(Transaction<T> tx) throws DeviceDriverException {
        return transact(tx, lockTimeout);
    }

    /** Runs {@code tx} under the lock, waiting at most {@code timeout} for it. */
    public <T> T transact(Transaction<T> tx, Duration timeout) throws DeviceDriverException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Slot slot = SLOTS.computeIfAbsent(lockKey(), k -> new Slot());
        if (slot.mutex.isHeldByCurrentThread()) {
            throw new IllegalStateException(
                    "coordination file " + file + " is already locked by this thread");
        }
        boolean queued;
        try {
            queued = slot.mutex.tryLock(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DeviceDriverException(
                    "interrupted while waiting for the lock on coordination file " + file, e);
        }
        if (!queued) {
            throw new DeviceDriverException(
                    "timed out after "
                            + human(timeout)
                            + " waiting for the lock on coordination file "
                            + file
                            + " (lock file "
                            + lockFile
                            + "): held by another thread of this process (pid "
                            + ProcessHandle.current().pid()
                            + ")");
        }
        try {
            FileLock lock = acquire(slot, deadline, timeout);
            try {
                writeHolder(slot.channel, holderLine());
                return tx.run(new LockedView(read()));
            } finally {
                writeHolder(slot.channel, " ".repeat(HOLDER_LINE - 1) + "\n");
                try {
                    lock.release();
                } catch (IOException e) {
                    // Closing the channel releases the lock for certain.
                    slot.close();
                }
            }
        } finally {
            slot.mutex.unlock();
        }
    }

    private Path lockKey() {
        // One slot per real lock file, however the path was spelled.
        Path key = lockKey;
        if (key == null) {
            try {
                key = lockFile.getParent().toRealPath().resolve(lockFile.getFileName());
                lockKey = key;
            } catch (IOException e) {
                return lockFile; // the folder is missing; opening the lock file will say so
            }
        }
        return key;
    }

    private FileLock acquire(Slot slot, long deadline, Duration timeout)
            throws DeviceDriverException {
        long backoff = MIN_BACKOFF_NANOS;
        while (true) {
            FileChannel ch = slot.open(this);
            FileLock lock = null;
            boolean otherClassLoader = false;
            try {
                lock = ch.tryLock();
            } catch (OverlappingFileLockException e) {
                otherClassLoader = true;
            } catch (IOException e) {
                slot.close();
                throw new DeviceDriverException(
                        "cannot lock coordination lock file " + lockFile + ": " + e.getMessage(), e);
            }
            long left = deadline - System.nanoTime();
            if (lock == null && left > 0) {
                if (otherClassLoader) {
                    // A lock of this JVM (another plugin's copy of this class): the kernel would
                    // grant it to us at once, so poll the JVM's lock table instead.
                    LockSupport.parkNanos(Math.min(backoff, left));
                    backoff = Math.min(backoff * 2, MAX_BACKOFF_NANOS);
                    checkInterrupt();
                    continue;
                }
                lock = waitForLock(slot, ch, left);
            }
            if (lock != null) {
                if (lock.isValid() && slot.stillCurrent(lockFile)) {
                    return lock;
                }
                // The lock file was deleted or replaced since we opened it: lock the new one.
                slot.close();
                continue;
            }
            if (deadline - System.nanoTime() > 0) {
                continue;
            }
            throw new DeviceDriverException(
                    "timed out after "
                            + human(timeout)
                            + " waiting for the lock on coordination file "
                            + file
                            + " (lock file "
                            + lockFile
                            + "): "
                            + describeHolder(slot.open(this))
                            + "; raise coordination.lock-timeout if allocations are slow");
        }
    }

    /**
     * Blocks in {@link FileChannel#lock()} for at most {@code nanos}; {@code null} when the time
     * ran out. The watchdog's interrupt closes the channel; {@link Slot#open} reopens it.
     */
    private FileLock waitForLock(Slot slot, FileChannel ch, long nanos)
            throws DeviceDriverException {
        Watch watch = new Watch(Thread.currentThread());
        ScheduledFuture<?> alarm = WATCHDOG.schedule(watch::fire, nanos, TimeUnit.NANOSECONDS);
        try {
            return ch.lock();
        } catch (ClosedByInterruptException | FileLockInterruptionException e) {
            // The interrupt closed the channel (the JDK turns the first into the second).
            slot.close();
            if (!watch.disarm()) {
                Thread.currentThread().interrupt();
                throw new DeviceDriverException(
                        "interrupted while waiting for the lock on coordination file " + file, e);
            }
            return null;
        } catch (OverlappingFileLockException e) {
            return null;
        } catch (IOException e) {
            slot.close();
            throw new DeviceDriverException(
                    "cannot lock coordination lock file " + lockFile + ": " + e.getMessage(), e);
        } finally {
            alarm.cancel(false);
            if (watch.disarm()) {
                // Our own alarm, not the caller's interrupt: clear it. A lock it cut short (the
                // channel closed) is no longer valid and is retried by the caller.
                Thread.interrupted();
            }
        }
    }

    private void checkInterrupt() throws DeviceDriverException {
        if (Thread.currentThread().isInterrupted()) {
            throw new DeviceDriverException(
                    "interrupted while waiting for the lock on coordination file " + file);
        }
    }

    private static ScheduledThreadPoolExecutor watchdog() {
        ScheduledThreadPoolExecutor timer =
                new ScheduledThreadPoolExecutor(
                        1,
                        r -> {
                            Thread t = new Thread(r, "flink-devices-coordination-lock-timeout");
                            t.setDaemon(true);
                            return t;
                        });
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }

    /** Interrupts a waiting thread once, unless disarmed first. */
    private static final class Watch {
        private final Thread waiter;
        private boolean armed = true;
        private boolean fired;

        Watch(Thread waiter) {
            this.waiter = waiter;
        }

        synchronized void fire() {
            if (armed) {
                fired = true;
                armed = false;
                waiter.interrupt();
            }
        }

        /** Stops the alarm; whether it had fired. */
        synchronized boolean disarm() {
            armed = false;
            return fired;
        }
    }

    private String holderLine() {
        ProcessIdentity self = ProcessIdentity.current();
        String line = self.pid() + " " + self.start() + " " + System.currentTimeMillis();
        return line + " ".repeat(Math.max(0, HOLDER_LINE - 1 - line.length())) + "\n";
    }

    private void writeHolder(FileChannel ch, String line) {
        try {
            ch.write(ByteBuffer.wrap(line.getBytes(StandardCharsets.US_ASCII)), 0);
        } catch (IOException e) {
            LOG.debug("Cannot write the holder into {}", lockFile, e);
        }
    }

    private String describeHolder(FileChannel ch) {
        String text;
        try {
            ByteBuffer buf = ByteBuffer.allocate(256);
            ch.read(buf, 0);
            text = new String(buf.array(), 0, buf.position(), StandardCharsets.US_ASCII).trim();
            int nl = text.indexOf('\n');
            text = nl < 0 ? text : text.substring(0, nl).trim();
        } catch (IOException e) {
            text = "";
        }
        String[] f = text.split(" +");
        if (f.length != 3 || !f[0].matches("[0-9]{1,18}") || !f[2].matches("[0-9]{1,19}")) {
            return "the holder did not say who it is (a process other than a flink-devices"
                    + " coordinator may hold a lock on the lock file)";
        }
        long pid = Long.parseLong(f[0]);
        String since = Instant.ofEpochMilli(Long.parseLong(f[2])).toString();
        String command =
                ProcessHandle.of(pid)
                        .flatMap(h -> h.info().commandLine())
                        .map(c -> c.length() > 200 ? c.substring(0, 60) + " ... " + c.substring(c.length() - 120) : c)
                        .map(c -> ", command: " + c)
                        .orElse("");
        boolean alive = ProcessIdentity.startToken(pid).isPresent();
        return "held by process "
                + pid
                + " since "
                + since
                + (alive ? command : " (that PID is not running in this PID namespace)");
    }

    private RecordFormat.Parsed read() throws DeviceDriverException {
        byte[] content;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            long size = ch.size();
            if (size > 64L * 1024 * 1024) {
                throw new DeviceDriverException(
                        "coordination file " + file + " is " + size + " bytes, not a coordination file");
            }
            ByteBuffer buf = ByteBuffer.allocate((int) size);
            while (buf.hasRemaining() && ch.read(buf) >= 0) {
                // read to the end
            }
            content = buf.array();
            if (buf.position() < content.length) {
                content = java.util.Arrays.copyOf(content, buf.position());
            }
        } catch (NoSuchFileException e) {
            return RecordFormat.parse(new byte[0]);
        } catch (IOException e) {
            refuseLink(file); // O_NOFOLLOW or a folder: say so clearly
            throw ioFailure("cannot read coordination file " + file, file, e);
        }
        RecordFormat.Parsed parsed = RecordFormat.parse(content);
        if (parsed.damaged()) {
            LOG.warn(
                    "Coordination file {} was damaged and is repaired from what could be read: kept"
                            + " {} records, {} of them from damaged lines (their owners count as alive"
                            + " while their PIDs run): {}; dropped {} unreadable lines: {}",
                    file,
                    parsed.records().size(),
                    parsed.partial().size(),
                    abbreviate(parsed.partial()),
                    parsed.dropped().size(),
                    abbreviate(parsed.dropped()));
        }
        return parsed;
    }

    private void write(List<DeviceRecord> records) throws DeviceDriverException {
        byte[] content = RecordFormat.format(records);
        try (FileChannel ch = openForWriting()) {
            byte[] padded = RecordFormat.padded(content, ch.size());
            ByteBuffer buf = ByteBuffer.wrap(padded);
            long pos = 0;
            while (buf.hasRemaining()) {
                pos += ch.write(buf, pos);
            }
            if (padded.length > content.length) {
                ch.truncate(content.length);
            }
        } catch (IOException e) {
            throw ioFailure("cannot write coordination file " + file, file, e);
        }
    }

    /** Opens the records file for writing, creating it with the configured mode if missing. */
    private FileChannel openForWriting() throws IOException {
        try {
            return FileChannel.open(file, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException missing) {
            FileChannel ch;
            try {
                ch =
                        FileChannel.open(
                                file,
                                Set.of(
                                        StandardOpenOption.CREATE_NEW,
                                        StandardOpenOption.WRITE,
                                        LinkOption.NOFOLLOW_LINKS),
                                permissionAttribute());
            } catch (FileAlreadyExistsException raced) {
                // Someone without the lock (an operator, a test) created it meanwhile.
                return FileChannel.open(file, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
            }
            try {
                applyPermissions(file);
            } catch (IOException e) {
                ch.close();
                throw e;
            }
            return ch;
        }
    }

    private FileAttribute<?>[] permissionAttribute() {
        if (!posix()) {
            return new FileAttribute<?>[0];
        }
        return new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(permissions)};
    }

    private boolean posix() {
        return posix;
    }

    /** Sets the configured mode exactly: the umask may have removed the group bits. */
    private void applyPermissions(Path p) throws IOException {
        // The umask never removes owner bits, only the group bits of 0660.
        if (posix() && permissions.contains(PosixFilePermission.GROUP_WRITE)) {
            Files.setPosixFilePermissions(p, permissions);
        }
    }

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
                    "coordination file "
                            + p
                            + " is a symbolic link"
                            + target
                            + "; refusing to follow it (someone may be redirecting writes). Remove it"
                            + " or point coordination.file at a regular file in a folder only"
                            + " TaskManagers can write");
        }
        if (!attrs.isRegularFile()) {
            throw new DeviceDriverException(
                    "coordination file " + p + " exists but is not a regular file");
        }
    }

    private DeviceDriverException ioFailure(String what, Path p, IOException e) {
        String reason = e.getMessage();
        if (e instanceof FileSystemException
                && String.valueOf(((FileSystemException) e).getReason()).contains("symbolic link")) {
            reason = p + " became a symbolic link; refusing to follow it";
        }
        return new DeviceDriverException(what + ": " + reason, e);
    }

    private static String abbreviate(List<String> lines) {
        StringBuilder sb = new StringBuilder();
        int shown = 0;
        for (String l : lines) {
            if (shown == 10) {
                sb.append(" ... (").append(lines.size() - shown).append(" more)");
                break;
            }
            if (shown > 0) {
                sb.append(" | ");
            }
            String clean = l.replaceAll("\\p{Cntrl}", "?");
            sb.append('\'').append(clean.length() > 100 ? clean.substring(0, 100) + "..." : clean).append('\'');
            shown++;
        }
        return sb.toString();
    }

    static String human(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }

    private final class LockedView implements Locked {
        private final RecordFormat.Parsed content;

        LockedView(RecordFormat.Parsed content) {
            this.content = content;
        }

        @Override
        public RecordFormat.Parsed content() {
            return content;
        }

        @Override
        public void write(List<DeviceRecord> records) throws DeviceDriverException {
            CoordinationFile.this.write(records);
        }
    }

    /** The lock file of one path as this class loader holds it open. */
    private static final class Slot {
        final ReentrantLock mutex = new ReentrantLock();
        FileChannel channel;
        Object fileKey;

        /** Opens the lock file if it is not open yet; only called with {@link #mutex} held. */
        FileChannel open(CoordinationFile owner) throws DeviceDriverException {
            if (channel != null && channel.isOpen()) {
                return channel;
            }
            Path lockFile = owner.lockFile;
            owner.refuseLink(lockFile);
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
                                    owner.permissionAttribute());
                    owner.applyPermissions(lockFile);
                } catch (FileAlreadyExistsException e) {
                    channel =
                            FileChannel.open(
                                    lockFile,
                                    StandardOpenOption.READ,
                                    StandardOpenOption.WRITE,
                                    LinkOption.NOFOLLOW_LINKS);
                }
                fileKey =
                        Files.readAttributes(lockFile, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                                .fileKey();
                return channel;
            } catch (NoSuchFileException e) {
                close();
                throw new DeviceDriverException(
                        "cannot create coordination lock file "
                                + lockFile
                                + ": folder "
                                + lockFile.getParent()
                                + " does not exist",
                        e);
            } catch (IOException e) {
                close();
                throw owner.ioFailure("cannot open coordination lock file " + lockFile, lockFile, e);
            }
        }

        boolean stillCurrent(Path lockFile) {
            try {
                Object now =
                        Files.readAttributes(lockFile, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                                .fileKey();
                return fileKey == null || fileKey.equals(now);
            } catch (IOException e) {
                return false;
            }
        }

        void close() {
            if (channel != null) {
                try {
                    channel.close();
                } catch (IOException ignored) {
                    // nothing more to release
                }
            }
            channel = null;
            fileKey = null;
        }
    }
}
