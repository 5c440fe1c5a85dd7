package io.flinkdevices.sdk.coordination.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads {@code /proc/<pid>/stat} of record owners, keeping the file of each owner open between
 * transactions.
 *
 * <p>Every allocation checks that the owners of the records it keeps still run. Opening {@code
 * /proc/<pid>/stat} (path lookup, open, read, close) cost 10-17 us an owner here; a positional
 * read on the file kept open costs 3-4 us. Keeping it open is also exact: the open file belongs
 * to the process it was opened for, not to its number, so once that process has exited a read
 * fails ({@code ESRCH}), also when a later process has the PID; such a failure, and any other, is
 * answered by opening the path afresh, which then sees the later process (whose start time
 * differs) or nothing. A read that succeeds shows the very process the file was opened for, and
 * the start time is compared in any case.
 *
 * <p>At most {@value #MAX_OPEN} files are kept open; when more owners show up all are closed and
 * the cache starts again (a host has a handful of TaskManagers).
 */
final class ProcStat {

    static final int MAX_OPEN = 64;

    private static final Path PROC = Path.of("/proc");
    private static final Map<Long, FileChannel> OPEN = new ConcurrentHashMap<>();
    private static final ThreadLocal<ByteBuffer> BUFFER = ThreadLocal.withInitial(() -> ByteBuffer.allocate(1024));

    private ProcStat() {}

    /** The fields of a stat line a coordinator needs. */
    static final class Read {
        /** No process has the PID. */
        static final Read GONE = new Read('?', 0, 0);

        /** Field 3. */
        final char state;
        /** Field 9. */
        final long flags;
        /** Field 22: clock ticks since boot at which the process started. */
        final long startTicks;

        Read(char state, long flags, long startTicks) {
            this.state = state;
            this.flags = flags;
            this.startTicks = startTicks;
        }
    }

    /**
     * The stat fields of {@code pid}; {@link Read#GONE} when no such process runs; {@code null}
     * when the file cannot be read or parsed (the caller then asks the JDK).
     */
    static Read read(long pid) {
        ByteBuffer buf = BUFFER.get();
        FileChannel kept = OPEN.get(pid);
        // An interrupted thread would close a kept file by reading it: it opens its own below.
        if (kept != null && !Thread.currentThread().isInterrupted()) {
            try {
                int n = readAll(kept, buf);
                if (n > 0) {
                    return parse(buf.array(), n);
                }
            } catch (IOException | RuntimeException e) {
                // exited (ESRCH), closed by another thread: open the path afresh below
            }
            if (OPEN.remove(pid, kept)) {
                closeQuietly(kept);
            }
        }
        FileChannel ch;
        try {
            ch = FileChannel.open(PROC.resolve(Long.toString(pid)).resolve("stat"), StandardOpenOption.READ);
        } catch (NoSuchFileException e) {
            return Read.GONE;
        } catch (IOException | RuntimeException e) {
            return null;
        }
        boolean keep = false;
        try {
            int n = readAll(ch, buf);
            Read read = n > 0 ? parse(buf.array(), n) : null;
            if (read != null && !Thread.currentThread().isInterrupted()) {
                if (OPEN.size() >= MAX_OPEN) {
                    closeAll();
                }
                keep = OPEN.putIfAbsent(pid, ch) == null;
            }
            return read;
        } catch (IOException | RuntimeException e) {
            // exited between open and read, or an interrupt: as the JDK sees it
            return null;
        } finally {
            if (!keep) {
                closeQuietly(ch);
            }
        }
    }

    private static int readAll(FileChannel ch, ByteBuffer buf) throws IOException {
        buf.clear();
        long pos = 0;
        int r;
        while ((r = ch.read(buf, pos)) > 0) {
            pos += r;
            if (!buf.hasRemaining()) {
                // a stat line is about 300 bytes; this one is not what we expect
                return -1;
            }
        }
        return (int) pos;
    }

    /**
     * Fields 3, 9 and 22 of a stat line; {@code null} when it has fewer fields or they are not
     * numbers. The command name (field 2) is in parentheses and may itself contain {@code ") "}.
     */
    static Read parse(byte[] b, int n) {
        int close = -1;
        for (int i = n - 1; i >= 0; i--) {
            if (b[i] == ')') {
                close = i;
                break;
            }
        }
        int i = close + 1;
        int field = 2;
        char state = 0;
        long flags = -1;
        while (i < n) {
            while (i < n && b[i] <= ' ') {
                i++;
            }
            if (i >= n) {
                break;
            }
            int start = i;
            while (i < n && b[i] > ' ') {
                i++;
            }
            field++;
            if (field == 3) {
                if (i - start != 1) {
                    return null;
                }
                state = (char) b[start];
            } else if (field == 9) {
                flags = number(b, start, i);
            } else if (field == 22) {
                long ticks = number(b, start, i);
                return ticks < 0 || flags < 0 ? null : new Read(state, flags, ticks);
            }
        }
        return null;
    }

    /** A non-negative decimal number of at most 19 digits; -1 when it is not one. */
    private static long number(byte[] b, int from, int to) {
        if (to - from < 1 || to - from > 19) {
            return -1;
        }
        long v = 0;
        for (int i = from; i < to; i++) {
            int d = b[i] - '0';
            if (d < 0 || d > 9 || v > (Long.MAX_VALUE - d) / 10) {
                return -1;
            }
            v = v * 10 + d;
        }
        return v;
    }

    private static void closeAll() {
        for (Map.Entry<Long, FileChannel> e : OPEN.entrySet()) {
            if (OPEN.remove(e.getKey(), e.getValue())) {
                closeQuietly(e.getValue());
            }
        }
    }

    private static void closeQuietly(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // a read-only file of /proc: nothing was pending
        }
    }
}
