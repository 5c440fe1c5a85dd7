package io.flinkdevices.sdk.coordination.internal;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.internal.FileNode;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Keeps our writes away from {@code flock(2)} holders. {@code flock} locks (taken by {@code
 * flock(1)} and Flink's own discovery script) do not exclude POSIX locks on Linux and Java cannot
 * take one without native code, so before every write {@link ProcLocks} looks in {@code
 * /proc/locks}: while another process holds a {@code flock} lock on the lock file or the records
 * file, nothing is written ({@link FlockHeld}); the POSIX lock is given up and the transaction
 * runs again once the {@code flock} lock is gone, within the lock timeout.
 */
final class FlockGuard {

    private static final long MIN_BACKOFF_NANOS = TimeUnit.MICROSECONDS.toNanos(50);
    private static final long MAX_FLOCK_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private FlockGuard() {}

    /** The holder of a {@code flock} lock showed up before a write: nothing was written. */
    static final class FlockHeld extends DeviceDriverException {
        private static final long serialVersionUID = 1L;
        final long pid;

        FlockHeld(long pid) {
            super("flock held by pid " + pid);
            this.pid = pid;
        }
    }

    /** Throws {@link FlockHeld} when another process holds a {@code flock} lock on either file. */
    static void checkNoFlock(FileNode lock, FileNode data) throws FlockHeld {
        OptionalLong holder = ProcLocks.flockHolder(procLocksKeys(lock, data));
        if (holder.isPresent() && holder.getAsLong() != ProcessHandle.current().pid()) {
            throw new FlockHeld(holder.getAsLong());
        }
    }

    /** Waits, without our lock, until no other process holds a {@code flock} lock on the files. */
    static void awaitNoFlock(SafeFile files, FileNode lock, long deadline, Duration timeout)
            throws DeviceDriverException {
        long backoff = MIN_BACKOFF_NANOS;
        while (true) {
            OptionalLong holder = ProcLocks.flockHolder(flockKeys(files, lock));
            if (holder.isEmpty() || holder.getAsLong() == ProcessHandle.current().pid()) {
                return;
            }
            long pid = holder.getAsLong();
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new DeviceDriverException(
                        LockDiagnostics.timedOut(files, timeout)
                                + ": process "
                                + pid
                                + LockDiagnostics.command(pid)
                                + " holds a flock(2) lock on "
                                + files.lockFile()
                                + " or "
                                + files.file()
                                + "; flink-devices locks with POSIX record locks (fcntl) and writes"
                                + " nothing while another process holds a flock lock on either file;"
                                + " raise coordination.lock-timeout if such edits take longer");
            }
            LockSupport.parkNanos(Math.min(backoff, left));
            backoff = Math.min(backoff * 2, MAX_FLOCK_POLL_NANOS);
            LockDiagnostics.checkInterrupt(files);
        }
    }

    /** The {@code /proc/locks} keys of the lock file and the records file, as they are now. */
    private static List<String> flockKeys(SafeFile files, FileNode lock) {
        FileNode data = null;
        try {
            data = FileNode.of(files.file()).orElse(null);
        } catch (IOException e) {
            // looked at again when opened, which names the problem
        }
        return procLocksKeys(lock, data);
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
}
