package io.flinkdevices.sdk.coordination.internal;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.config.DriverParams;

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
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
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
 *   <li>Records are changed in place without moving a record that stays (see {@link
 *       RecordFormat#rewrite}): appended lines are written first, then the old part of the file,
 *       where only lines that go (overwritten with {@code #}s) and padding that new records
 *       reuse change, then padding at the end is truncated. Every byte of a record that stays is
 *       the same before and after, so a writer killed at any point of any write (SIGKILL, a full
 *       disk, a torn multi-page write) never damages the record of another owner; a cut can only
 *       damage the writer's own new record. In place costs one open, one or two writes and
 *       rarely a truncate, where replacing through a temporary file and a rename cost several
 *       times more on ext4, and it works in a sticky folder such as {@code /tmp} where another
 *       user's file may be written but not replaced. No {@code fsync}: after a power loss every
 *       owner is dead anyway (and records of an earlier boot are reclaimed).
 *   <li>Nothing is opened before it has been looked at ({@code lstat}): only a regular file, or
 *       no file, is accepted at either path; a symbolic link, FIFO, device, socket or folder is
 *       refused with the full config key. Both files are then opened read-write ({@code
 *       O_RDWR}), which on Linux never blocks, even on a FIFO swapped in after the look, and read
 *       with positional reads, which fail on a FIFO or socket ({@code Illegal seek}) instead of
 *       waiting. The records file is read only up to {@value #MAX_BYTES} bytes (a coordination
 *       file holds one short line per device); a larger one is refused.
 *   <li>POSIX locks belong to the process, not the channel, and closing any channel on the file
 *       drops every lock the process holds on it. So each lock file is opened once per class
 *       loader and kept open, threads of one JVM queue on a {@link ReentrantLock} first, and a
 *       second class loader (another plugin) sees {@link OverlappingFileLockException}, which
 *       counts as "held".
 *   <li>{@code flock(2)} locks (taken by {@code flock(1)} and Flink's own discovery script) do not
 *       exclude POSIX locks on Linux and Java cannot take one without native code, so before every
 *       write {@link ProcLocks} looks in {@code /proc/locks}: while another process holds a
 *       {@code flock} lock on the lock file or the records file, nothing is written; the lock is
 *       given up and the transaction runs again once the {@code flock} lock is gone (within the
 *       lock timeout).
 *   <li>Waiting is bounded: a waiter blocks in {@link FileChannel#lock()} (the kernel wakes it
 *       the moment the holder unlocks, so no waiter starves behind pollers) and a watchdog
 *       interrupts it at the timeout, which closes the channel; it is reopened on the next use.
 *       A waiter that gives up names the holder from {@code /proc/locks}; nothing is written into
 *       the lock file, so a transaction costs no write but its own.
 *   <li>While this process holds devices through a file, a keep-alive task touches both files
 *       (so that a cleaner of old temporary files such as systemd-tmpfiles never ages them out)
 *       and writes this process's records again if they are missing (the file was deleted),
 *       unless another process has taken the device meanwhile, which it logs as an error.
 * </ul>
 */
public final class CoordinationFile {

    private static final Logger LOG = LoggerFactory.getLogger(CoordinationFile.class);

    /** The most a records file may hold: far more than one short line per device of any host. */
    public static final int MAX_BYTES = 1 << 20;

    /** How often a file whose devices this process holds is touched and checked, by default. */
    public static final Duration DEFAULT_KEEP_ALIVE = Duration.ofMinutes(1);

    private static final Map<Path, Slot> SLOTS = new ConcurrentHashMap<>();
    private static final Map<Path, KeepAlive> KEEP_ALIVE = new ConcurrentHashMap<>();
    private static final long MIN_BACKOFF_NANOS = TimeUnit.MICROSECONDS.toNanos(50);
    private static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    private static final long MAX_FLOCK_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private static final ScheduledThreadPoolExecutor WATCHDOG =
            scheduler("flink-devices-coordination-lock-timeout");
    private static final ScheduledThreadPoolExecutor KEEPER =
            scheduler("flink-devices-coordination-keep-alive");

    private static volatile Duration keepAliveInterval = DEFAULT_KEEP_ALIVE;
    private static volatile WriteFault writeFault;

    private final Path file;
    private final Path lockFile;
    private final Duration lockTimeout;
    private final Set<PosixFilePermission> permissions;
    private final boolean posix;
    private final String fileKey;
    private volatile Path lockKey;

    /**
     * @param file the records file; its lock is {@code file + ".lock"}
     * @param lockTimeout how long to wait for the lock
     * @param groupShared whether the group may read and write ({@code 0660}), else {@code 0600}
     */
    public CoordinationFile(Path file, Duration lockTimeout, boolean groupShared) {
        this(file, lockTimeout, groupShared, "coordination.file");
    }

    /**
     * @param file the records file; its lock is {@code file + ".lock"}
     * @param lockTimeout how long to wait for the lock
     * @param groupShared whether the group may read and write ({@code 0660}), else {@code 0600}
     * @param fileKey the full config key that named the file, at the start of every error
     */
    public CoordinationFile(Path file, Duration lockTimeout, boolean groupShared, String fileKey) {
        this.file = file.toAbsolutePath().normalize();
        this.lockFile = sibling(this.file, ".lock");
        this.lockTimeout = Objects.requireNonNull(lockTimeout);
        this.permissions = PosixFilePermissions.fromString(groupShared ? "rw-rw----" : "rw-------");
        this.posix = this.file.getFileSystem().supportedFileAttributeViews().contains("posix");
        this.fileKey = Objects.requireNonNull(fileKey);
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

    /**
     * How often files whose devices this process holds are touched and checked; applies to files
     * this process starts to hold devices through afterwards. For tests and tuning.
     */
    public static void setKeepAliveInterval(Duration interval) {
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("keep-alive interval must be positive but is " + interval);
        }
        keepAliveInterval = interval;
    }

    /** A fault injected into the writer: called with the open file and the planned writes. */
    @FunctionalInterface
    public interface WriteFault {
        /**
         * Called just before a write; may write part of the plan itself and end the process, to
         * test what a writer killed in the middle of a write leaves.
         */
        void beforeWrite(FileChannel channel, RecordFormat.Rewrite plan, long oldLength) throws IOException;
    }

    /** Injects {@code fault} into every later write of this class loader; {@code null} removes it. */
    public static void injectWriteFault(WriteFault fault) {
        writeFault = fault;
    }

    /** Work done while holding the lock. It may run more than once, so it must not act outside. */
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
                    fileKey + ": interrupted while waiting for the lock on coordination file " + file, e);
        }
        if (!queued) {
            throw new DeviceDriverException(
                    fileKey
                            + ": timed out after "
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
            while (true) {
                FileLock lock = acquire(slot, deadline, timeout);
                long flockHolder;
                try {
                    try (Data data = openData(slot)) {
                        return tx.run(new LockedView(slot, data));
                    } catch (FlockHeld e) {
                        flockHolder = e.pid;
                    } catch (Retry e) {
                        continue;
                    }
                } finally {
                    try {
                        lock.release();
                    } catch (IOException e) {
                        // Closing the channel releases the lock for certain.
                        slot.close();
                    }
                }
                awaitNoFlock(slot, flockHolder, deadline, timeout);
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
                throw ioFailure("cannot lock coordination lock file " + lockFile, lockFile, e);
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
                    fileKey
                            + ": timed out after "
                            + human(timeout)
                            + " waiting for the lock on coordination file "
                            + file
                            + " (lock file "
                            + lockFile
                            + "): "
                            + describeHolder()
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
                        fileKey + ": interrupted while waiting for the lock on coordination file " + file, e);
            }
            return null;
        } catch (OverlappingFileLockException e) {
            return null;
        } catch (IOException e) {
            slot.close();
            throw ioFailure("cannot lock coordination lock file " + lockFile, lockFile, e);
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
                    fileKey + ": interrupted while waiting for the lock on coordination file " + file);
        }
    }

    private static ScheduledThreadPoolExecutor scheduler(String name) {
        ScheduledThreadPoolExecutor timer =
                new ScheduledThreadPoolExecutor(
                        1,
                        r -> {
                            Thread t = new Thread(r, name);
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

    private String describeHolder() {
        FileNode node;
        try {
            node = FileNode.of(lockFile).orElse(null);
        } catch (IOException e) {
            node = null;
        }
        OptionalLong pid =
                node == null ? OptionalLong.empty() : node.procLocksKey().map(ProcLocks::posixHolder).orElse(OptionalLong.empty());
        if (pid.isEmpty()) {
            return "the holder cannot be told (/proc/locks does not name it)";
        }
        if (pid.getAsLong() == 0) {
            return "held by a process in another PID namespace (/proc/locks shows it as pid 0)";
        }
        long holder = pid.getAsLong();
        if (holder == ProcessHandle.current().pid()) {
            return "held by this process (pid " + holder + "), through another class loader (another plugin)";
        }
        Optional<ProcessHandle.Info> info = ProcessHandle.of(holder).map(ProcessHandle::info);
        String since =
                info.flatMap(ProcessHandle.Info::startInstant).map(t -> ", running since " + t).orElse("");
        String command =
                info.flatMap(ProcessHandle.Info::commandLine)
                        .map(c -> c.length() > 200 ? c.substring(0, 60) + " ... " + c.substring(c.length() - 120) : c)
                        .map(c -> ", command: " + c)
                        .orElse("");
        return "held by process " + holder + since + command;
    }

    /** The holder of a {@code flock} lock showed up before a write: nothing was written. */
    private static final class FlockHeld extends DeviceDriverException {
        private static final long serialVersionUID = 1L;
        final long pid;

        FlockHeld(long pid) {
            super("flock held by pid " + pid);
            this.pid = pid;
        }
    }

    /** The file changed under us in a way the transaction cannot see (created without the lock). */
    private static final class Retry extends DeviceDriverException {
        private static final long serialVersionUID = 1L;

        Retry() {
            super("retry");
        }
    }

    /** The {@code /proc/locks} keys of the lock file and the records file, as they are now. */
    private List<String> flockKeys(Slot slot) {
        FileNode data = null;
        try {
            data = FileNode.of(file).orElse(null);
        } catch (IOException e) {
            // looked at again when opened, which names the problem
        }
        return procLocksKeys(slot.node, data);
    }

    private static List<String> procLocksKeys(FileNode lock, FileNode data) {
        List<String> keys = new ArrayList<>(2);
        for (FileNode node : new FileNode[] {lock, data}) {
            if (node != null) {
                node.procLocksKey().ifPresent(keys::add);
            }
        }
        return keys;
    }

    private void checkNoFlock(Slot slot, Data data) throws FlockHeld {
        OptionalLong holder = ProcLocks.flockHolder(procLocksKeys(slot.node, data.node));
        if (holder.isPresent() && holder.getAsLong() != ProcessHandle.current().pid()) {
            throw new FlockHeld(holder.getAsLong());
        }
    }

    /** Waits, without our lock, until no other process holds a {@code flock} lock on the files. */
    private void awaitNoFlock(Slot slot, long pid, long deadline, Duration timeout)
            throws DeviceDriverException {
        long backoff = MIN_BACKOFF_NANOS;
        while (true) {
            OptionalLong holder = ProcLocks.flockHolder(flockKeys(slot));
            if (holder.isEmpty() || holder.getAsLong() == ProcessHandle.current().pid()) {
                return;
            }
            pid = holder.getAsLong();
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                String command =
                        ProcessHandle.of(pid)
                                .flatMap(h -> h.info().commandLine())
                                .map(c -> " (command: " + (c.length() > 200 ? c.substring(0, 200) + " ..." : c) + ")")
                                .orElse("");
                throw new DeviceDriverException(
                        fileKey
                                + ": timed out after "
                                + human(timeout)
                                + " waiting for the lock on coordination file "
                                + file
                                + ": process "
                                + pid
                                + command
                                + " holds a flock(2) lock on "
                                + lockFile
                                + " or "
                                + file
                                + "; flink-devices locks with POSIX record locks (fcntl) and writes"
                                + " nothing while another process holds a flock lock on either file;"
                                + " raise coordination.lock-timeout if such edits take longer");
            }
            LockSupport.parkNanos(Math.min(backoff, left));
            backoff = Math.min(backoff * 2, MAX_FLOCK_POLL_NANOS);
            checkInterrupt();
        }
    }

    /**
     * The records file as seen under the lock: its channel ({@code null} when absent; owned by
     * the slot, which keeps it open between transactions) and content.
     */
    private static final class Data implements AutoCloseable {
        final Slot slot;
        FileChannel channel;
        FileNode node;
        RecordFormat.Layout layout;

        Data(Slot slot) {
            this.slot = slot;
        }

        /** Forgets the channel after a failure, so that the next transaction opens it afresh. */
        void discard() {
            slot.closeData();
            channel = null;
        }

        @Override
        public void close() {
            // The slot keeps the channel: the next transaction reuses it while the path still
            // names the same file.
        }
    }

    private Data openData(Slot slot) throws DeviceDriverException {
        Data data = new Data(slot);
        for (int attempt = 0; ; attempt++) {
            Optional<FileNode> before = look(file, "coordination file");
            if (before.isEmpty()) {
                slot.closeData();
                data.layout = RecordFormat.layout(new byte[0]);
                return data;
            }
            refuseNonRegular(file, before.get(), "coordination file");
            FileChannel ch = slot.dataChannel;
            FileNode node = slot.dataNode;
            if (ch == null || !ch.isOpen() || !before.get().sameFile(node)) {
                // Not open yet, or the path names another file now (deleted, replaced): open it,
                // and make sure that what was opened is what was looked at.
                slot.closeData();
                try {
                    // O_RDWR: never blocks, not even on a FIFO put there since the look above.
                    ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
                } catch (NoSuchFileException gone) {
                    continue;
                } catch (IOException e) {
                    refuseLink(file);
                    throw ioFailure("cannot open coordination file " + file, file, e);
                }
                Optional<FileNode> after;
                try {
                    after = FileNode.of(file);
                } catch (IOException e) {
                    after = Optional.empty();
                }
                if (after.isEmpty() || !before.get().sameFile(after.get())) {
                    closeQuietly(ch);
                    if (attempt < 3) {
                        continue;
                    }
                    throw new DeviceDriverException(
                            fileKey + ": coordination file " + file + " was replaced again and again while"
                                    + " it was opened; someone is swapping files at that path");
                }
                node = after.get();
                slot.dataChannel = ch;
                slot.dataNode = node;
            }
            data.channel = ch;
            data.node = node;
            try {
                data.layout = RecordFormat.layout(readBounded(ch));
            } catch (IOException e) {
                data.discard();
                throw ioFailure("cannot read coordination file " + file, file, e);
            } catch (DeviceDriverException e) {
                data.discard();
                throw e;
            }
            warnIfDamaged(data.layout.parsed());
            return data;
        }
    }

    private byte[] readBounded(FileChannel ch) throws IOException, DeviceDriverException {
        long size = ch.size();
        if (size > MAX_BYTES) {
            throw tooLarge(size);
        }
        ByteBuffer buf = ByteBuffer.allocate((int) size + 1);
        long pos = 0;
        while (true) {
            int n = ch.read(buf, pos); // positional: fails on a FIFO or socket instead of waiting
            if (n < 0) {
                break;
            }
            pos += n;
            if (!buf.hasRemaining()) {
                if (buf.capacity() > MAX_BYTES) {
                    throw tooLarge(ch.size());
                }
                ByteBuffer bigger = ByteBuffer.allocate(Math.min(buf.capacity() * 2, MAX_BYTES + 1));
                buf.flip();
                bigger.put(buf);
                buf = bigger;
            }
        }
        return java.util.Arrays.copyOf(buf.array(), buf.position());
    }

    private DeviceDriverException tooLarge(long size) {
        return new DeviceDriverException(
                fileKey
                        + ": coordination file "
                        + file
                        + " is "
                        + size
                        + " bytes; expected at most "
                        + MAX_BYTES
                        + " bytes (a coordination file holds one short line per device), so it is"
                        + " not a coordination file or it was damaged; nothing was read or written."
                        + " Move it away once no TaskManager of this host holds devices through it,"
                        + " or point the key at another file");
    }

    private DeviceDriverException tooLargeToWrite(long size, List<DeviceRecord> records) {
        int longest = 0;
        for (DeviceRecord r : records) {
            longest = Math.max(longest, r.deviceId().length());
        }
        return new DeviceDriverException(
                fileKey
                        + ": cannot record "
                        + records.size()
                        + " devices in coordination file "
                        + file
                        + ": it would grow to "
                        + size
                        + " bytes, over the "
                        + MAX_BYTES
                        + " bytes every reader of the file accepts (so every later allocation on"
                        + " this host would fail); nothing was written. The device ids are too"
                        + " many or too long for one file (the longest has "
                        + longest
                        + " characters): a driver names a device by a short id such as an index,"
                        + " a UUID or a PCI address");
    }

    private void warnIfDamaged(RecordFormat.Parsed parsed) {
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
    }

    private void write(Slot slot, Data data, List<DeviceRecord> records) throws DeviceDriverException {
        checkNoFlock(slot, data);
        RecordFormat.Layout old = data.layout;
        RecordFormat.Rewrite plan = RecordFormat.rewrite(old, records);
        if (plan.truncateTo > MAX_BYTES) {
            // every reader refuses a larger file, so writing it would fail every later
            // allocation of the host until someone deletes it
            throw tooLargeToWrite(plan.truncateTo, records);
        }
        try {
            if (data.channel == null) {
                data.channel = create();
                slot.dataChannel = data.channel;
                slot.dataNode = FileNode.of(file).orElse(null);
            }
            FileChannel ch = data.channel;
            WriteFault fault = writeFault;
            if (fault != null) {
                fault.beforeWrite(ch, plan, old.length());
            }
            writeFully(ch, plan.tail, old.length());
            if (plan.head != null) {
                writeFully(ch, plan.head, 0);
            }
            if (plan.truncateTo < plan.written) {
                ch.truncate(plan.truncateTo);
            }
        } catch (IOException e) {
            data.discard();
            throw ioFailure("cannot write coordination file " + file, file, e);
        }
        byte[] now = new byte[(int) plan.truncateTo];
        byte[] headNow = plan.head != null ? plan.head : old.content;
        int fromHead = Math.min(headNow.length, now.length);
        System.arraycopy(headNow, 0, now, 0, fromHead);
        if (now.length > fromHead) {
            System.arraycopy(plan.tail, 0, now, fromHead, now.length - fromHead);
        }
        data.layout = RecordFormat.layout(now);
        noteOwn(records);
    }

    private static void writeFully(FileChannel ch, byte[] bytes, long at) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        long pos = at;
        while (buf.hasRemaining()) {
            pos += ch.write(buf, pos);
        }
    }

    /** Creates the records file with the configured mode; {@link Retry} when someone else just did. */
    private FileChannel create() throws IOException, DeviceDriverException {
        FileChannel ch;
        try {
            ch =
                    FileChannel.open(
                            file,
                            Set.of(
                                    StandardOpenOption.CREATE_NEW,
                                    StandardOpenOption.READ,
                                    StandardOpenOption.WRITE,
                                    LinkOption.NOFOLLOW_LINKS),
                            permissionAttribute());
        } catch (FileAlreadyExistsException raced) {
            // Someone without the lock (an operator, a test) created it meanwhile: read it first.
            throw new Retry();
        }
        try {
            applyPermissions(file);
        } catch (IOException e) {
            ch.close();
            throw e;
        }
        return ch;
    }

    private static void closeQuietly(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // nothing was pending
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

    /** What is at {@code p}, never following a link; empty when nothing is. */
    private Optional<FileNode> look(Path p, String what) throws DeviceDriverException {
        try {
            return FileNode.of(p);
        } catch (IOException e) {
            throw ioFailure("cannot look at " + what + " " + p, p, e);
        }
    }

    /** Refuses anything at {@code p} but a regular file, naming what it is. */
    private void refuseNonRegular(Path p, FileNode node, String what) throws DeviceDriverException {
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

    private DeviceDriverException ioFailure(String what, Path p, IOException e) {
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
        private final Slot slot;
        private final Data data;

        LockedView(Slot slot, Data data) {
            this.slot = slot;
            this.data = data;
        }

        @Override
        public RecordFormat.Parsed content() {
            return data.layout.parsed();
        }

        @Override
        public void write(List<DeviceRecord> records) throws DeviceDriverException {
            CoordinationFile.this.write(slot, data, records);
        }
    }

    // ---- keep-alive: touch the files and re-record this process's records while it holds devices

    private void noteOwn(List<DeviceRecord> written) {
        ProcessIdentity self = ProcessIdentity.current();
        List<DeviceRecord> mine = new ArrayList<>();
        for (DeviceRecord r : written) {
            if (r.isOwnedBy(self)) {
                mine.add(r);
            }
        }
        Path key = lockKey();
        if (mine.isEmpty()) {
            // The task stays scheduled and ends itself at its next tick if this process still
            // holds nothing then: allocating and releasing again and again costs no scheduling.
            KeepAlive k = KEEP_ALIVE.get(key);
            if (k != null) {
                k.mine = List.of();
            }
            return;
        }
        KEEP_ALIVE.compute(
                key,
                (k, v) -> {
                    if (v == null) {
                        v = new KeepAlive(this, key);
                        long every = keepAliveInterval.toNanos();
                        v.task = KEEPER.scheduleWithFixedDelay(v::tick, every, every, TimeUnit.NANOSECONDS);
                    }
                    v.mine = List.copyOf(mine);
                    return v;
                });
    }

    /** Keeps one file alive while this process holds devices through it. */
    private static final class KeepAlive {
        final CoordinationFile file;
        final Path key;
        volatile List<DeviceRecord> mine = List.of();
        ScheduledFuture<?> task;

        KeepAlive(CoordinationFile file, Path key) {
            this.file = file;
            this.key = key;
        }

        void tick() {
            if (mine.isEmpty() && endIfIdle()) {
                return;
            }
            try {
                file.transact(this::rerecord, file.lockTimeout);
                touch(file.file);
                touch(file.lockFile);
            } catch (DeviceDriverException | RuntimeException e) {
                LOG.warn("Cannot keep coordination file {} alive: {}", file.file, e.getMessage());
            }
        }

        /** Ends this task if this process still holds nothing through the file; whether it did. */
        private boolean endIfIdle() {
            boolean[] ended = {false};
            KEEP_ALIVE.computeIfPresent(
                    key,
                    (k, v) -> {
                        if (v != this || !v.mine.isEmpty()) {
                            return v;
                        }
                        task.cancel(false);
                        ended[0] = true;
                        return null;
                    });
            return ended[0] || KEEP_ALIVE.get(key) != this;
        }

        private Void rerecord(Locked locked) throws DeviceDriverException {
            List<DeviceRecord> records = locked.content().records();
            List<DeviceRecord> missing = new ArrayList<>(mine);
            missing.removeAll(records);
            if (missing.isEmpty()) {
                return null;
            }
            OwnerStatus.Classifier classifier = new OwnerStatus.Classifier(ProcessIdentity.current());
            Map<String, Long> takenBy = new HashMap<>();
            for (DeviceRecord r : records) {
                OwnerStatus s = classifier.classify(r);
                if (s != OwnerStatus.DEAD && s != OwnerStatus.THIS_PROCESS) {
                    takenBy.putIfAbsent(r.deviceId(), r.pid());
                }
            }
            List<DeviceRecord> out = new ArrayList<>(records);
            List<String> again = new ArrayList<>();
            for (DeviceRecord m : missing) {
                Long other = takenBy.get(m.deviceId());
                if (other != null) {
                    LOG.error(
                            "Coordination file {} lost the record of device {} held by this process"
                                    + " (pid {}), and process {} has taken the device since: both use it",
                            file.file,
                            m.deviceId(),
                            m.pid(),
                            other);
                } else {
                    out.add(m);
                    again.add(m.deviceId());
                }
            }
            if (!again.isEmpty()) {
                locked.write(out);
                LOG.warn(
                        "Coordination file {} had lost the records of devices {} that this process"
                                + " holds (was it deleted?); they are recorded again",
                        file.file,
                        again);
            }
            return null;
        }

        private static void touch(Path p) {
            try {
                Optional<FileNode> node = FileNode.of(p);
                if (node.isPresent() && node.get().type() == FileNode.Type.REGULAR) {
                    FileTime now = FileTime.fromMillis(System.currentTimeMillis());
                    Files.getFileAttributeView(p, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                            .setTimes(now, now, null);
                }
            } catch (IOException e) {
                LOG.debug("Cannot touch {}", p, e);
            }
        }
    }

    /** The lock file of one path as this class loader holds it open. */
    private static final class Slot {
        final ReentrantLock mutex = new ReentrantLock();
        FileChannel channel;
        FileNode node;
        /** The records file, kept open between transactions while its path names it. */
        FileChannel dataChannel;
        FileNode dataNode;

        /** Opens the lock file if it is not open yet; only called with {@link #mutex} held. */
        FileChannel open(CoordinationFile owner) throws DeviceDriverException {
            if (channel != null && channel.isOpen()) {
                return channel;
            }
            Path lockFile = owner.lockFile;
            Optional<FileNode> there = owner.look(lockFile, "coordination lock file");
            if (there.isPresent()) {
                owner.refuseNonRegular(lockFile, there.get(), "coordination lock file");
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
                                    owner.permissionAttribute());
                    owner.applyPermissions(lockFile);
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
                    owner.refuseNonRegular(lockFile, odd, "coordination lock file");
                }
                return channel;
            } catch (NoSuchFileException e) {
                close();
                throw new DeviceDriverException(
                        owner.fileKey
                                + ": cannot create coordination lock file "
                                + lockFile
                                + ": folder "
                                + lockFile.getParent()
                                + " does not exist",
                        e);
            } catch (IOException e) {
                close();
                owner.refuseLink(lockFile);
                throw owner.ioFailure("cannot open coordination lock file " + lockFile, lockFile, e);
            }
        }

        boolean stillCurrent(Path lockFile) {
            try {
                Optional<FileNode> now = FileNode.of(lockFile);
                return node == null || (now.isPresent() && node.sameFile(now.get()));
            } catch (IOException e) {
                return false;
            }
        }

        void closeData() {
            if (dataChannel != null) {
                closeQuietly(dataChannel);
            }
            dataChannel = null;
            dataNode = null;
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
            node = null;
        }
    }
}
