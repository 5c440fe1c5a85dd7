package io.flinkdevices.sdk.coordination.internal;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.internal.FileNode;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What a waiter that gives up says: who holds the lock, read from {@code /proc/locks} (nothing is
 * ever written into the lock file, so a transaction costs no write but its own), and the words
 * of the timeout and interrupt errors, each starting with the config key.
 */
final class LockDiagnostics {

    private LockDiagnostics() {}

    /** {@code 5 s} or {@code 250 ms}. */
    static String human(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }

    /** The start of every timeout error: {@code key: timed out after 5 s waiting for ... file F}. */
    static String timedOut(SafeFile files, Duration timeout) {
        return files.fileKey()
                + ": timed out after "
                + human(timeout)
                + " waiting for the lock on coordination file "
                + files.file();
    }

    /** The error of a waiter whose thread was interrupted. */
    static DeviceDriverException interrupted(SafeFile files, Throwable cause) {
        return new DeviceDriverException(
                files.fileKey() + ": interrupted while waiting for the lock on coordination file " + files.file(),
                cause);
    }

    /** Throws {@link #interrupted} when the current thread is interrupted. */
    static void checkInterrupt(SafeFile files) throws DeviceDriverException {
        if (Thread.currentThread().isInterrupted()) {
            throw interrupted(files, null);
        }
    }

    /** Names the process holding the POSIX lock on {@code lockFile}, as well as it can be told. */
    static String describePosixHolder(Path lockFile) {
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

    /** {@code  (command: ...)} of process {@code pid}, or nothing when it cannot be read. */
    static String command(long pid) {
        return ProcessHandle.of(pid)
                .flatMap(h -> h.info().commandLine())
                .map(c -> " (command: " + (c.length() > 200 ? c.substring(0, 200) + " ..." : c) + ")")
                .orElse("");
    }
}
