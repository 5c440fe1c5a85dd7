package io.flinkdevices.sdk.coordination.internal;

import io.flinkdevices.sdk.host.internal.FileNode;

import java.io.FileInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * Finds the processes that hold locks on files, from {@code /proc/locks}.
 *
 * <p>Java takes only POSIX record locks ({@code fcntl}), and on Linux those and {@code flock(2)}
 * locks do not exclude each other. {@code flock(1)} (an operator's edit, Flink's own {@code
 * nvidia-gpu-discovery.sh}) takes {@code flock} locks. Without native code a JVM cannot take one,
 * but it can see one: {@code /proc/locks} lists every lock of the host with its type, holder PID
 * and {@code <major>:<minor>:<inode>}. A coordinator looks there before it writes and does not
 * write while another process holds a {@code flock} lock on the lock file or the records file; a
 * waiter that gives up looks there for the holder of the POSIX lock it waited for.
 *
 * <p>The kernel renders the whole table on every read, so the file is kept open and read with
 * positional reads from offset 0 (a {@code seq_file} starts over): about 4 us here where opening
 * it each time cost 12 us.
 *
 * <p>Rendering takes the kernel's lock-table semaphore for writing ({@code
 * percpu_down_write(&file_rwsem)} in {@code fs/locks.c}). The first writer after a pause waits for
 * an RCU grace period; a writer within about one grace period of the last does not. A read after a
 * pause therefore costs 3-11 ms on the build machine (4 us when warm), the bulk of a coordinated
 * discovery, where a TaskManager allocates once. {@link #warmUp()} starts that wait on another
 * thread while the caller does other work (a driver's discovery) and keeps the semaphore warm
 * until the check, so that the read before the write, still made under the coordination lock,
 * finds it warm.
 */
public final class ProcLocks {

    private static final Path PROC_LOCKS = Path.of("/proc/locks");
    private static final boolean AVAILABLE = Files.isReadable(PROC_LOCKS);

    private static final int FIRST_BUFFER = 16384;
    /**
     * The most of the table read: about 100,000 locks. Any local user can take millions of range
     * locks and make the table hundreds of MB; past this the holder "cannot be told", as when the
     * file cannot be read, rather than a coordinator filling its heap.
     */
    static final int MAX_TABLE = 8 * 1024 * 1024;

    /** {@link #MAX_TABLE}; lower in a test, which cannot take 100,000 locks in reasonable time. */
    static volatile int maxTable = MAX_TABLE;

    /** How long a warm-up keeps the semaphore warm at most, waiting for the check it prepares. */
    static final long WARM_FOR_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Well within one grace period (a few ms), so that the semaphore never goes back to idle. */
    private static final long WARM_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    private static final AtomicBoolean WARMING = new AtomicBoolean();
    /** Until when ({@link System#nanoTime}) the warm-up thread reads; a check ends it earlier. */
    private static volatile long warmUntil;

    private static final ThreadLocal<byte[]> READ_BUFFER = ThreadLocal.withInitial(() -> new byte[FIRST_BUFFER]);
    private static final Object OPEN = new Object();
    private static volatile FileChannel channel;

    private ProcLocks() {}

    /** Whether {@code /proc/locks} can be read here (Linux). */
    public static boolean available() {
        return AVAILABLE;
    }

    /**
     * Starts reading the first byte of {@code /proc/locks} on a daemon thread and returns at once:
     * the kernel's grace-period wait (see the class comment) then runs beside the caller's work.
     * The thread reads it again every 2 ms, so that the semaphore stays warm through a discovery
     * longer than a grace period (a real {@code nvidia-smi} takes about 20 ms), until the next
     * check here or for at most 1 s. Each such read holds the kernel's lock table for a few
     * microseconds, as any reader of the file does. Reads nothing into any buffer of ours and
     * decides nothing: the check before a write reads the table itself. Does nothing where the
     * table cannot be read; a warm-up that still runs is extended.
     */
    public static void warmUp() {
        if (!AVAILABLE) {
            return;
        }
        warmUntil = System.nanoTime() + WARM_FOR_NANOS;
        if (!WARMING.compareAndSet(false, true)) {
            return;
        }
        Thread t = new Thread(ProcLocks::keepWarm, "flink-devices-proc-locks-warm-up");
        t.setDaemon(true);
        try {
            t.start();
        } catch (RuntimeException | OutOfMemoryError e) {
            // no thread to spare: the read before the write pays the wait itself
            WARMING.set(false);
        }
    }

    private static void keepWarm() {
        try (FileChannel ch = FileChannel.open(PROC_LOCKS, StandardOpenOption.READ)) {
            // one byte from offset 0 renders the first record, which is what takes the semaphore
            ByteBuffer one = ByteBuffer.allocate(1);
            while (true) {
                one.clear();
                ch.read(one, 0);
                long left = warmUntil - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                LockSupport.parkNanos(Math.min(WARM_EVERY_NANOS, left));
            }
        } catch (IOException | RuntimeException e) {
            // only a head start: the check before a write reads the table and reports problems
        } finally {
            WARMING.set(false);
        }
    }

    /** Whether a warm-up thread runs now; for tests. */
    static boolean warming() {
        return WARMING.get();
    }

    /**
     * The PID of a process holding a {@code flock} lock on one of {@code files} (keys as {@link
     * FileNode#procLocksKey()} gives them), or empty when none does or it cannot be told.
     */
    public static OptionalLong flockHolder(Collection<String> files) {
        return holder(files, "FLOCK");
    }

    /**
     * The PID of the process holding a POSIX record lock on {@code file} (a key as {@link
     * FileNode#procLocksKey()} gives it); {@code 0} when the holder is in another PID namespace;
     * empty when nobody holds one or it cannot be told.
     */
    public static OptionalLong posixHolder(String file) {
        return holder(List.of(file), "POSIX");
    }

    private static OptionalLong holder(Collection<String> files, String type) {
        if (!AVAILABLE || files.isEmpty()) {
            return OptionalLong.empty();
        }
        int n = read();
        // the check a warm-up prepared has run: nothing more to keep warm for
        warmUntil = System.nanoTime();
        if (n < 0) {
            return OptionalLong.empty();
        }
        byte[] all = READ_BUFFER.get();
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
                // "1: FLOCK  ADVISORY  WRITE 4711 fe:00:2154502 0 EOF"; "1: -> FLOCK ..." waits
                List<String> f = fields(new String(all, lineStart, lineEnd - lineStart, StandardCharsets.ISO_8859_1));
                if (f.size() < 6 || !f.get(1).equals(type) || !f.get(5).equals(key)) {
                    continue;
                }
                try {
                    return OptionalLong.of(Long.parseLong(f.get(4)));
                } catch (NumberFormatException e) {
                    return OptionalLong.of(0);
                }
            }
        }
        return OptionalLong.empty();
    }

    /** Reads the table into this thread's buffer; its length, or -1 when it cannot be read. */
    private static int read() {
        for (int attempt = 0; attempt < 2; attempt++) {
            FileChannel ch = channel;
            try {
                if (Thread.currentThread().isInterrupted()) {
                    // An interrupted thread would close the shared channel: read it the plain way.
                    return readOnce();
                }
                if (ch == null || !ch.isOpen()) {
                    ch = reopen(ch);
                }
                byte[] all = READ_BUFFER.get();
                ByteBuffer buf = ByteBuffer.wrap(all);
                long pos = 0;
                int r;
                while ((r = ch.read(buf, pos)) > 0) {
                    pos += r;
                    if (!buf.hasRemaining()) {
                        if (all.length >= maxTable) {
                            return tooLarge();
                        }
                        all = Arrays.copyOf(all, all.length * 2);
                        READ_BUFFER.set(all);
                        buf = ByteBuffer.wrap(all);
                        buf.position((int) pos);
                    }
                }
                return (int) pos;
            } catch (IOException | RuntimeException e) {
                // Closed by another thread's interrupt, or a read error: open it again once.
                reopenAfterFailure(ch);
            }
        }
        return readOnce();
    }

    /** The table is over {@link #MAX_TABLE}: the thread's buffer goes back to its first size; -1. */
    private static int tooLarge() {
        READ_BUFFER.set(new byte[FIRST_BUFFER]);
        return -1;
    }

    private static FileChannel reopen(FileChannel seen) throws IOException {
        synchronized (OPEN) {
            FileChannel ch = channel;
            if (ch == null || ch == seen || !ch.isOpen()) {
                ch = FileChannel.open(PROC_LOCKS, StandardOpenOption.READ);
                channel = ch;
            }
            return ch;
        }
    }

    private static void reopenAfterFailure(FileChannel failed) {
        synchronized (OPEN) {
            if (channel == failed && failed != null) {
                try {
                    failed.close();
                } catch (IOException ignored) {
                    // opened again on the next read
                }
                channel = null;
            }
        }
    }

    /** Opens, reads and closes the table without an interruptible channel; -1 on failure. */
    private static int readOnce() {
        byte[] all = READ_BUFFER.get();
        int n = 0;
        try (FileInputStream in = new FileInputStream(PROC_LOCKS.toFile())) {
            int r;
            while ((r = in.read(all, n, all.length - n)) > 0) {
                n += r;
                if (n == all.length) {
                    if (all.length >= maxTable) {
                        return tooLarge();
                    }
                    all = Arrays.copyOf(all, all.length * 2);
                    READ_BUFFER.set(all);
                }
            }
            return n;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** The blank-separated fields of a line (no regular expression: this runs in every transaction). */
    private static List<String> fields(String line) {
        List<String> out = new ArrayList<>(8);
        int i = 0;
        int n = line.length();
        while (i < n) {
            while (i < n && line.charAt(i) <= ' ') {
                i++;
            }
            int start = i;
            while (i < n && line.charAt(i) > ' ') {
                i++;
            }
            if (i > start) {
                out.add(line.substring(start, i));
            }
        }
        return out;
    }

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
}
