package io.flinkdevices.sdk.coordination.internal;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.internal.FileNode;
import io.flinkdevices.sdk.nativelib.NativeDeadline;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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
        Optional<ProcessHandle.Info> info = info(holder);
        String since =
                info.flatMap(ProcessHandle.Info::startInstant).map(t -> ", running since " + t).orElse("");
        String command =
                info.flatMap(ProcessHandle.Info::commandLine)
                        .map(c -> c.length() > 200 ? c.substring(0, 60) + " ... " + c.substring(c.length() - 120) : c)
                        .map(c -> ", command: " + c)
                        .orElseGet(() -> name(holder).map(n -> ", process name: " + n).orElse(""));
        return "held by process " + holder + since + command;
    }

    /** {@code  (command: ...)} of process {@code pid}, or its name, or nothing when neither can be read. */
    static String command(long pid) {
        return info(pid)
                .flatMap(ProcessHandle.Info::commandLine)
                .map(c -> " (command: " + (c.length() > 200 ? c.substring(0, 200) + " ..." : c) + ")")
                .orElseGet(() -> name(pid).map(n -> " (process name: " + n + ")").orElse(""));
    }

    /**
     * Bounds reading a holder's command line: the JDK reads {@code /proc/<pid>/cmdline}, which
     * waits for the holder's memory map lock, and a holder stuck in the kernel with it held (a
     * page fault on a dead network mount) would turn a bounded lock timeout into a hang.
     */
    private static final NativeDeadline PROC = new NativeDeadline("/proc of a lock's holder", "");
    private static final Duration PROC_WAIT = Duration.ofSeconds(1);

    /** The holder's start and command line, read within a second; empty when it could not be. */
    private static Optional<ProcessHandle.Info> info(long pid) {
        try {
            return PROC.call("reading its command line", PROC_WAIT, "(a fixed 1 s)", () -> ProcessHandle.of(pid).map(ProcessHandle::info));
        } catch (DeviceDriverException e) {
            return Optional.empty();
        }
    }

    /** {@code /proc/<pid>/comm}, the process name (at most 15 characters), which takes no lock of its memory. */
    private static Optional<String> name(long pid) {
        try (InputStream in = Files.newInputStream(Path.of("/proc", Long.toString(pid), "comm"))) {
            String n = new String(in.readNBytes(64), StandardCharsets.UTF_8).strip();
            return n.isEmpty() ? Optional.empty() : Optional.of(n);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
