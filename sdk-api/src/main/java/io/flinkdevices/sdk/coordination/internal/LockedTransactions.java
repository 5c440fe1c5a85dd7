package io.flinkdevices.sdk.coordination.internal;

import io.flinkdevices.sdk.DeviceDriverException;

import java.io.IOException;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs work under the lock of one coordination file: threads of this class loader queue on the
 * {@link LockSlot}, then the POSIX lock is taken ({@link PosixLock}), the records are read ({@link
 * RecordStore}) and the work runs. When a {@code flock} holder shows up before a write ({@link
 * FlockGuard}) or the records file was created by someone without the lock, nothing is written and
 * the work runs again, so work must not act outside the file. All of it within one deadline.
 */
final class LockedTransactions {

    private final SafeFile files;
    private final Duration lockTimeout;
    private final RecordStore store;
    private final Consumer<List<DeviceRecord>> afterWrite;
    private volatile Path lockKey;

    /**
     * @param afterWrite told every record list that was written, after the write
     */
    LockedTransactions(SafeFile files, Duration lockTimeout, Consumer<List<DeviceRecord>> afterWrite) {
        this.files = files;
        this.lockTimeout = Objects.requireNonNull(lockTimeout);
        this.store = new RecordStore(files);
        this.afterWrite = afterWrite;
    }

    /** Work done while holding the lock. It may run more than once, so it must not act outside. */
    @FunctionalInterface
    interface Work<T> {
        T run(Session session) throws DeviceDriverException;
    }

    /** The file as seen under the lock. */
    final class Session {
        private final RecordStore.Opened data;

        private Session(RecordStore.Opened data) {
            this.data = data;
        }

        /** What the file held when the lock was taken, with the writes of this session since. */
        RecordFormat.Parsed content() {
            return data.layout().parsed();
        }

        /** Replaces the records; the quarantines stay. */
        void write(List<DeviceRecord> records) throws DeviceDriverException {
            write(records, content().quarantines());
        }

        /** Replaces the records and the quarantines. */
        void write(List<DeviceRecord> records, List<QuarantineRecord> quarantines) throws DeviceDriverException {
            store.write(data, records, quarantines);
            afterWrite.accept(records);
        }
    }

    SafeFile files() {
        return files;
    }

    Duration lockTimeout() {
        return lockTimeout;
    }

    /** Runs {@code work} under the lock, waiting at most {@code timeout} for it. */
    <T> T run(Work<T> work, Duration timeout) throws DeviceDriverException {
        long deadline = System.nanoTime() + timeout.toNanos();
        LockSlot slot = LockSlot.of(lockKey());
        if (slot.mutex.isHeldByCurrentThread()) {
            throw new IllegalStateException(
                    "coordination file " + files.file() + " is already locked by this thread");
        }
        boolean queued;
        try {
            queued = slot.mutex.tryLock(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw LockDiagnostics.interrupted(files, e);
        }
        if (!queued) {
            throw new DeviceDriverException(
                    LockDiagnostics.timedOut(files, timeout)
                            + " (lock file "
                            + files.lockFile()
                            + "): held by another thread of this process (pid "
                            + ProcessHandle.current().pid()
                            + ")");
        }
        try {
            while (true) {
                FileLock lock = PosixLock.acquire(files, slot, deadline, timeout);
                try {
                    return work.run(new Session(store.open(slot)));
                } catch (FlockGuard.FlockHeld e) {
                    // nothing was written: wait for the flock holder below, without our lock
                } catch (RecordStore.Retry e) {
                    continue;
                } finally {
                    try {
                        lock.release();
                    } catch (IOException e) {
                        // Closing the channel releases the lock for certain.
                        slot.close();
                    }
                }
                FlockGuard.awaitNoFlock(files, slot.node, deadline, timeout);
            }
        } finally {
            slot.mutex.unlock();
        }
    }

    /** The real path of the lock file (one slot per real lock file, however the path was spelled). */
    Path lockKey() {
        Path key = lockKey;
        if (key == null) {
            try {
                Path lockFile = files.lockFile();
                key = lockFile.getParent().toRealPath().resolve(lockFile.getFileName());
                lockKey = key;
            } catch (IOException e) {
                return files.lockFile(); // the folder is missing; opening the lock file will say so
            }
        }
        return key;
    }
}
