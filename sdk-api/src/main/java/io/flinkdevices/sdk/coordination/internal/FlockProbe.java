package io.flinkdevices.sdk.coordination.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.OptionalLong;

/**
 * Finds {@code flock(2)} locks that other processes hold, from {@code /proc/locks}.
 *
 * <p>Java takes only POSIX record locks ({@code fcntl}), and on Linux those and {@code flock}
 * locks do not exclude each other. {@code flock(1)} (an operator's edit, Flink's own
 * {@code nvidia-gpu-discovery.sh}) takes {@code flock} locks. Without native code a JVM cannot take
 * one, but it can see one: {@code /proc/locks} lists every lock of the host with its type, holder
 * PID and {@code <major>:<minor>:<inode>}. A coordinator looks there before it writes and does not
 * write while another process holds a {@code flock} lock on the lock file or the records file.
 */
public final class FlockProbe {

    private static final Path PROC_LOCKS = Path.of("/proc/locks");
    private static final boolean AVAILABLE = Files.isReadable(PROC_LOCKS);

    private FlockProbe() {}

    /** Whether {@code /proc/locks} can be read here (Linux). */
    public static boolean available() {
        return AVAILABLE;
    }

    /**
     * The PID of a process holding a {@code flock} lock on one of {@code files} (keys as {@link
     * FileNode#procLocksKey()} gives them), or empty when none does or it cannot be told.
     */
    public static OptionalLong holder(Collection<String> files) {
        if (!AVAILABLE || files.isEmpty()) {
            return OptionalLong.empty();
        }
        byte[] all;
        try {
            all = Files.readAllBytes(PROC_LOCKS);
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
        String text = new String(all, StandardCharsets.ISO_8859_1);
        for (String key : files) {
            int at = 0;
            while ((at = text.indexOf(key, at)) >= 0) {
                int lineStart = text.lastIndexOf('\n', at) + 1;
                int lineEnd = text.indexOf('\n', at);
                String line = text.substring(lineStart, lineEnd < 0 ? text.length() : lineEnd);
                at += key.length();
                // "1: FLOCK  ADVISORY  WRITE 4711 fe:00:2154502 0 EOF"; "1: -> FLOCK ..." waits
                String[] f = line.trim().split("\\s+");
                if (f.length < 6 || !f[1].equals("FLOCK") || !f[5].equals(key)) {
                    continue;
                }
                try {
                    return OptionalLong.of(Long.parseLong(f[4]));
                } catch (NumberFormatException e) {
                    return OptionalLong.of(0);
                }
            }
        }
        return OptionalLong.empty();
    }
}
