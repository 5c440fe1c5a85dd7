package io.flinkdevices.sdk.coordination.internal;

import io.flinkdevices.sdk.DeviceDriverException;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A coordination file and its lock: {@code <file>} holds the records, {@code <file>.lock} is the
 * stable file whose POSIX record lock ({@link FileChannel#tryLock()}) serializes every reader and
 * writer on the host. This class is the façade the coordinator uses; each job lives in a class of
 * its own in this package:
 *
 * <ul>
 *   <li>{@link SafeFile}: nothing is opened before it has been looked at ({@code lstat}); only a
 *       regular file, or no file, is accepted at either path; a symbolic link, FIFO, device,
 *       socket or folder is refused with the full config key; created files get the configured
 *       mode exactly.
 *   <li>{@link LockSlot}: POSIX locks belong to the process, not the channel, and closing any
 *       channel on the file drops every lock the process holds on it. So each lock file is opened
 *       once per class loader and kept open, threads of one JVM queue on a {@link ReentrantLock}
 *       first, and a second class loader (another plugin) sees {@link
 *       OverlappingFileLockException}, which counts as "held".
 *   <li>{@link PosixLock}: waiting is bounded; a waiter blocks in {@link FileChannel#lock()} (the
 *       kernel wakes it the moment the holder unlocks, so no waiter starves behind pollers) and a
 *       watchdog interrupts it at the timeout; {@link LockDiagnostics}: a waiter that gives up
 *       names the holder from {@code /proc/locks}; nothing is written into the lock file.
 *   <li>{@link FlockGuard}: while another process holds a {@code flock(2)} lock on either file
 *       (Flink's own discovery script takes one), nothing is written; the transaction runs again
 *       once it is gone, within the lock timeout.
 *   <li>{@link RecordStore}: records are changed in place without moving a record that stays, so
 *       a writer killed at any point of any write never damages the record of another owner;
 *       {@link SizeCap}: a records file over {@value #MAX_BYTES} bytes is neither read nor
 *       written.
 *   <li>{@link LockedTransactions}: the order of the above within one deadline.
 *   <li>{@link KeepAlive}: while this process holds devices through a file, a task touches both
 *       files (so that a cleaner of old temporary files never ages them out) and writes this
 *       process's records again if they are missing, unless another process has taken the device
 *       meanwhile, which it logs as an error.
 * </ul>
 */
public final class CoordinationFile {

    /** The most a records file may hold: far more than one short line per device of any host. */
    public static final int MAX_BYTES = SizeCap.MAX_BYTES;

    /** How often a file whose devices this process holds is touched and checked, by default. */
    public static final Duration DEFAULT_KEEP_ALIVE = KeepAlive.DEFAULT_INTERVAL;

    private final SafeFile files;
    private final LockedTransactions transactions;

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
        this.files = new SafeFile(file, groupShared, fileKey);
        this.transactions = new LockedTransactions(files, lockTimeout, this::noteOwn);
    }

    public Path file() {
        return files.file();
    }

    public Path lockFile() {
        return files.lockFile();
    }

    /**
     * How often files whose devices this process holds are touched and checked; applies to files
     * this process starts to hold devices through afterwards. For tests and tuning.
     */
    public static void setKeepAliveInterval(Duration interval) {
        KeepAlive.setInterval(interval);
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
        RecordStore.injectFault(fault == null ? null : fault::beforeWrite);
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

        /** Replaces the records; the quarantines stay as they are. */
        void write(List<DeviceRecord> records) throws DeviceDriverException;

        /** Replaces the records and the quarantines (the devices out of service). */
        void write(List<DeviceRecord> records, List<QuarantineRecord> quarantines) throws DeviceDriverException;
    }

    /** Runs {@code tx} under the lock, waiting at most the lock timeout for it. */
    public <T> T transact(Transaction<T> tx) throws DeviceDriverException {
        return transact(tx, transactions.lockTimeout());
    }

    /** Runs {@code tx} under the lock, waiting at most {@code timeout} for it. */
    public <T> T transact(Transaction<T> tx, Duration timeout) throws DeviceDriverException {
        return transactions.run(session -> tx.run(new LockedView(session)), timeout);
    }

    private void noteOwn(List<DeviceRecord> written) {
        KeepAlive.noteOwn(transactions, written);
    }

    private static final class LockedView implements Locked {
        private final LockedTransactions.Session session;

        LockedView(LockedTransactions.Session session) {
            this.session = session;
        }

        @Override
        public RecordFormat.Parsed content() {
            return session.content();
        }

        @Override
        public void write(List<DeviceRecord> records) throws DeviceDriverException {
            session.write(records);
        }

        @Override
        public void write(List<DeviceRecord> records, List<QuarantineRecord> quarantines) throws DeviceDriverException {
            session.write(records, quarantines);
        }
    }
}
