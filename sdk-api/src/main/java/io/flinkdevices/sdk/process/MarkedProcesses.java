package io.flinkdevices.sdk.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds, on Linux, the processes that carry one run's marker in their environment: every process
 * a program starts inherits it, so children whose parent already exited (re-parented, no longer
 * its descendants) are found too.
 */
final class MarkedProcesses {

    /** The environment variable that carries a run's marker. */
    static final String MARKER_ENV = "FLINK_DEVICES_COMMAND_ID";

    private static final Duration EXEC_GRACE = Duration.ofSeconds(2);

    private MarkedProcesses() {}

    /**
     * Processes (Linux only) whose environment carries this run's marker. Only pids above the
     * program's are read: Linux hands out pids in increasing order, so the program's children are
     * there (barring a pid wrap-around during the run), and a run does not pay for reading every
     * process of a busy host.
     */
    static List<ProcessHandle> markedWith(String marker, long rootPid) {
        Path proc = Path.of("/proc");
        if (!Files.isDirectory(proc)) {
            return List.of();
        }
        byte[] needle = (MARKER_ENV + "=" + marker).getBytes(StandardCharsets.UTF_8);
        long self = ProcessHandle.current().pid();
        List<ProcessHandle> found = new ArrayList<>();
        List<Long> unreadable = new ArrayList<>();
        // A plain name listing: no Path per entry, no glob; only pids above the program's are read.
        String[] names = proc.toFile().list();
        for (String name : names == null ? new String[0] : names) {
            if (name.isEmpty() || name.charAt(0) < '0' || name.charAt(0) > '9') {
                continue;
            }
            long pid;
            try {
                pid = Long.parseLong(name);
            } catch (NumberFormatException e) {
                continue;
            }
            if (pid <= rootPid || pid == self) {
                continue;
            }
            byte[] env = environ(pid);
            if (env != null && env.length == 0 && !withoutEnvironmentForGood(pid)) {
                unreadable.add(pid);
            } else if (env != null && contains(env, needle)) {
                ProcessHandle.of(pid).ifPresent(found::add);
            }
        }
        // A process in the middle of exec() shows an empty environment for a moment; a child
        // that the program started just before it exited is often exactly there.
        // Under load (a 2-core host running a test suite) the half second once allowed here fell
        // short; only such processes are waited for, so the grace is generous.
        long deadline = System.nanoTime() + EXEC_GRACE.toNanos();
        for (long pause = 1; !unreadable.isEmpty() && System.nanoTime() < deadline; ) {
            pause = Math.min(pause * 2, 20);
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            for (var it = unreadable.iterator(); it.hasNext(); ) {
                long pid = it.next();
                byte[] env = environ(pid);
                if (env == null || env.length > 0) {
                    it.remove();
                    if (env != null && contains(env, needle)) {
                        ProcessHandle.of(pid).ifPresent(found::add);
                    }
                } else if (withoutEnvironmentForGood(pid)) {
                    it.remove(); // it exited meanwhile
                }
            }
        }
        return found;
    }

    /** The raw environment of {@code pid}; null when it is gone or belongs to another user. */
    private static byte[] environ(long pid) {
        try {
            return Files.readAllBytes(Path.of("/proc", Long.toString(pid), "environ"));
        } catch (IOException | SecurityException e) {
            return null;
        }
    }

    /**
     * Whether {@code pid} shows an empty environment for good rather than for the moment of an
     * exec(): a kernel thread (a child of kthreadd, pid 2) never has one, a zombie no longer has
     * one. Neither can be a program's live leftover, and waiting on them would only delay the run.
     */
    private static boolean withoutEnvironmentForGood(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            char state = fields[0].charAt(0);
            return pid == 2 || "2".equals(fields[1]) || state == 'Z' || state == 'X';
        } catch (IOException | RuntimeException e) {
            return true;
        }
    }

    /** Whether the NUL-separated {@code haystack} holds {@code needle} as one whole entry. */
    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            if (i > 0 && haystack[i - 1] != 0) {
                continue;
            }
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i + needle.length == haystack.length || haystack[i + needle.length] == 0;
        }
        return false;
    }
}
