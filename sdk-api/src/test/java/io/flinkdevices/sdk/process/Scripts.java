package io.flinkdevices.sdk.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** Writes small shell scripts for the process tests and checks on the processes they start. */
final class Scripts {

    private Scripts() {}

    /** Writes an executable {@code /bin/sh} script with {@code body}. */
    static Path script(Path file, String body) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, "#!/bin/sh\n" + body + "\n", StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }

    /** Reads a pid a script wrote, waiting briefly for the file to appear. */
    static long pid(Path file) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (System.nanoTime() < deadline) {
            if (Files.exists(file)) {
                String text = Files.readString(file).strip();
                if (!text.isEmpty()) {
                    return Long.parseLong(text);
                }
            }
            Thread.sleep(10);
        }
        throw new AssertionError("no pid in " + file);
    }

    /**
     * Whether {@code pid} no longer runs. A killed process whose parent died stays a zombie where
     * PID 1 does not reap (as in many containers); it runs no more, so it counts as gone.
     */
    static boolean gone(long pid) {
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        if (Files.isDirectory(Path.of("/proc", "self"))) {
            try {
                String s = Files.readString(stat);
                char state = s.charAt(s.lastIndexOf(')') + 2);
                return state == 'Z' || state == 'X';
            } catch (IOException e) {
                return true;
            }
        }
        return ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true);
    }

    /** Asserts that {@code pid} is gone within five seconds (a SIGKILL is delivered asynchronously). */
    static void assertGone(String what, long pid) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!gone(pid) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(gone(pid)).as(what + " (pid " + pid + ") must have been killed").isTrue();
    }

    /** Kills {@code pid} if a failed test left it running. */
    static void killQuietly(Path pidFile) {
        try {
            if (Files.exists(pidFile)) {
                ProcessHandle.of(Long.parseLong(Files.readString(pidFile).strip()))
                        .ifPresent(ProcessHandle::destroyForcibly);
            }
        } catch (IOException | NumberFormatException ignored) {
            // nothing to clean up
        }
    }
}
