package io.flinkdevices.sdk.coordination.internal;

import io.flinkdevices.sdk.DeviceDriverException;

import java.io.IOException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.FileLockInterruptionException;
import java.nio.channels.OverlappingFileLockException;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Takes the POSIX record lock ({@link FileChannel#lock()}) on a slot's lock file, waiting a
 * bounded time. A waiter blocks in the kernel, which wakes it the moment the holder unlocks, so no
 * waiter starves behind pollers; a watchdog interrupts it at the deadline, which closes the
 * channel, and {@link LockSlot#open} reopens it on the next use. A lock held by another class
 * loader of this JVM (another plugin's copy of these classes) shows as {@link
 * OverlappingFileLockException} and is polled with a short backoff. A waiter that gives up names
 * the holder ({@link LockDiagnostics#describePosixHolder}).
 */
final class PosixLock {

    private static final long MIN_BACKOFF_NANOS = TimeUnit.MICROSECONDS.toNanos(50);
    private static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    private static final ScheduledThreadPoolExecutor WATCHDOG =
            DaemonTimer.create("flink-devices-coordination-lock-timeout");

    private PosixLock() {}

    /**
     * Locks the slot's lock file by {@code deadline}, reopening it when it was deleted or replaced
     * meanwhile; only called with the slot's mutex held.
     */
    static FileLock acquire(SafeFile files, LockSlot slot, long deadline, Duration timeout)
            throws DeviceDriverException {
        long backoff = MIN_BACKOFF_NANOS;
        while (true) {
            FileChannel ch = slot.open(files);
            FileLock lock = null;
            boolean otherClassLoader = false;
            try {
                lock = ch.tryLock();
            } catch (OverlappingFileLockException e) {
                otherClassLoader = true;
            } catch (IOException e) {
                slot.close();
                throw files.ioFailure("cannot lock coordination lock file " + files.lockFile(), files.lockFile(), e);
            }
            long left = deadline - System.nanoTime();
            if (lock == null && left > 0) {
                if (otherClassLoader) {
                    // A lock of this JVM (another plugin's copy of this class): the kernel would
                    // grant it to us at once, so poll the JVM's lock table instead.
                    LockSupport.parkNanos(Math.min(backoff, left));
                    backoff = Math.min(backoff * 2, MAX_BACKOFF_NANOS);
                    LockDiagnostics.checkInterrupt(files);
                    continue;
                }
                lock = waitForLock(files, slot, ch, left);
            }
            if (lock != null) {
                if (lock.isValid() && slot.stillCurrent(files.lockFile())) {
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
                    LockDiagnostics.timedOut(files, timeout)
                            + " (lock file "
                            + files.lockFile()
                            + "): "
                            + LockDiagnostics.describePosixHolder(files.lockFile())
                            + "; raise coordination.lock-timeout if allocations are slow");
        }
    }

    /**
     * Blocks in {@link FileChannel#lock()} for at most {@code nanos}; {@code null} when the time
     * ran out. The watchdog's interrupt closes the channel; {@link LockSlot#open} reopens it.
     */
    private static FileLock waitForLock(SafeFile files, LockSlot slot, FileChannel ch, long nanos)
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
                throw LockDiagnostics.interrupted(files, e);
            }
            return null;
        } catch (OverlappingFileLockException e) {
            return null;
        } catch (IOException e) {
            slot.close();
            throw files.ioFailure("cannot lock coordination lock file " + files.lockFile(), files.lockFile(), e);
        } finally {
            alarm.cancel(false);
            if (watch.disarm()) {
                // Our own alarm, not the caller's interrupt: clear it. A lock it cut short (the
                // channel closed) is no longer valid and is retried by the caller.
                Thread.interrupted();
            }
        }
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
}
