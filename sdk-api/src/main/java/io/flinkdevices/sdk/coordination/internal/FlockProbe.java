package io.flinkdevices.sdk.coordination.internal;

import java.io.FileInputStream;
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

    private static final ThreadLocal<byte[]> READ_BUFFER = ThreadLocal.withInitial(() -> new byte[16384]);

    private FlockProbe() {}

    private static int indexOf(byte[] a, int n, byte[] k, int from) {
        outer:
        for (int i = from; i <= n - k.length; i++) {
            for (int j = 0; j < k.length; j++) {
                if (a[i + j] != k[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

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
        byte[] all = READ_BUFFER.get();
        int n = 0;
        try (FileInputStream in = new FileInputStream(PROC_LOCKS.toFile())) {
            int r;
            while ((r = in.read(all, n, all.length - n)) > 0) {
                n += r;
                if (n == all.length) {
                    all = java.util.Arrays.copyOf(all, all.length * 2);
                    READ_BUFFER.set(all);
                }
            }
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
        for (String key : files) {
            byte[] k = key.getBytes(StandardCharsets.ISO_8859_1);
            for (int at = indexOf(all, n, k, 0); at >= 0; at = indexOf(all, n, k, at + 1)) {
                int lineStart = at;
                while (lineStart > 0 && all[lineStart - 1] != '\n') {
                    lineStart--;
                }
                int lineEnd = at;
                while (lineEnd < n && all[lineEnd] != '\n') {
                    lineEnd++;
                }
                String line = new String(all, lineStart, lineEnd - lineStart, StandardCharsets.ISO_8859_1);
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
