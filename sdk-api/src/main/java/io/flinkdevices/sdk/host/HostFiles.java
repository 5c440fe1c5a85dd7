package io.flinkdevices.sdk.host;

import io.flinkdevices.sdk.host.internal.FileNode;

import org.apache.flink.annotation.PublicEvolving;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Reads files of the host (a configured program, a coordination file, a fake sysfs tree, a Flink
 * {@code config.yaml}) so that no FIFO, socket or folder put at the path, even after it was looked
 * at, makes the reader wait.
 *
 * <p>Opening a FIFO for reading blocks until a writer opens it, and Java cannot open with {@code
 * O_NONBLOCK}. Looking first ({@code stat}) and then opening leaves a window in which a FIFO can be
 * swapped in. So a read here:
 *
 * <ol>
 *   <li>looks at the path (links followed) and refuses anything but a regular file at once;
 *   <li>opens it read-only on a daemon opener thread while the caller waits at most {@value
 *       #OPEN_TIMEOUT_SECONDS} s. Should the open not return within a few milliseconds and the
 *       path now be a FIFO, another opener opens that FIFO read-write ({@code O_RDWR} never blocks
 *       on a FIFO on Linux) and closes it again: that counts as the writer the blocked open waits
 *       for, so it returns at once;
 *   <li>checks the opened file itself: a FIFO or socket cannot seek ({@code Illegal seek}), so it
 *       is refused before a single byte is read (reading a FIFO would wait for data);
 *   <li>reads at most {@code maxBytes}, refusing a larger file.
 * </ol>
 *
 * <p>Where the FIFO cannot be opened for writing by this process (another user's FIFO without
 * write permission) or is swapped away again, its opener stays blocked until someone writes to it;
 * the caller still gets a {@link RefusedFileException} after {@value #OPEN_TIMEOUT_SECONDS} s, and
 * the opener closes what it opened when it is released. At most {@value #MAX_OPENERS} openers
 * exist; while that many are blocked, reads are refused at once instead of starting more threads.
 * Only an attacker who may write to a folder on the path can cause any of this.
 *
 * <p>{@link #readEach} reads many files this way in one opener task, one after the other, with the
 * same steps and limits for each: the caller watches whichever file the task is at, gives its
 * waiting open a writer and refuses it after the same timeout.
 *
 * <pre>{@code
 * byte[] bytes = HostFiles.read(Path.of("/opt/fpga/vadd.aocx"), 512 << 20);
 * }</pre>
 */
@PublicEvolving
public final class HostFiles {

    /** How long a caller waits for a file to open before it is refused. */
    public static final int OPEN_TIMEOUT_SECONDS = 5;

    /** The most opener threads at once. */
    public static final int MAX_OPENERS = 32;

    /** Per thread: how many files it asked this class to read. */
    private static final ThreadLocal<long[]> READS_BY_THREAD = ThreadLocal.withInitial(() -> new long[1]);

    /**
     * How many files the calling thread has asked {@link #read}, {@link #readEach} and {@link
     * #checkReadable} for so far (each file once, read or refused). The driver contract kit counts
     * with it that reading a live key of an info reads no file on the reader's thread: a value a
     * task reads comes from the monitor's last sample, not from the host at every read.
     */
    public static long readsByThisThread() {
        return READS_BY_THREAD.get()[0];
    }

    /** An open still running after this long may be waiting on a FIFO: give it a writer. */
    static final long UNBLOCK_AFTER_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    /** Between two attempts to release an open that waits on a FIFO. */
    static final long UNBLOCK_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private static final AtomicInteger THREADS = new AtomicInteger();

    static final ThreadPoolExecutor OPENERS =
            new ThreadPoolExecutor(
                    0,
                    MAX_OPENERS,
                    10,
                    TimeUnit.SECONDS,
                    new SynchronousQueue<>(),
                    r -> {
                        Thread t = new Thread(r, "flink-devices-file-open-" + THREADS.incrementAndGet());
                        t.setDaemon(true);
                        // An idle opener must not keep a job's or plugin's class loader alive.
                        t.setContextClassLoader(null);
                        return t;
                    });

    /** No step between the look and the open; tests put a FIFO there. */
    static final BeforeOpen NOTHING = file -> {};

    private HostFiles() {}

    /**
     * The whole content of a regular file of at most {@code maxBytes} bytes, without ever waiting
     * on a FIFO (see the class comment).
     *
     * @throws java.nio.file.NoSuchFileException when nothing is at {@code file}
     * @throws RefusedFileException when it is not a regular file (also when it became one of
     *     those after it was looked at), holds more than {@code maxBytes} bytes, or did not open in
     *     time
     * @throws IOException with the operating system's reason when it cannot be read
     */
    public static byte[] read(Path file, int maxBytes) throws IOException {
        return read(file, maxBytes, NOTHING);
    }

    /**
     * Whether this process may read {@code file}, found out by opening and closing it the same
     * way {@link #read} does.
     *
     * @throws java.nio.file.NoSuchFileException when nothing is at {@code file}
     * @throws RefusedFileException when it is not a regular file or did not open in time
     * @throws IOException with the operating system's reason when it cannot be opened for reading
     */
    public static void checkReadable(Path file) throws IOException {
        READS_BY_THREAD.get()[0]++;
        requireRegular(file);
        open(file, NOTHING).close();
    }

    /**
     * Reads each of {@code files} as {@link #read} does (the same refusals, limits and open
     * timeout for each file), all of them one after the other on a single opener thread: a reader
     * of many small files (a driver reading the attributes of a fake sysfs tree) pays the switch
     * to an opener and back once instead of once a file. A file whose open does not return within
     * {@value #OPEN_TIMEOUT_SECONDS} s is refused and the files after it are read on another
     * opener.
     *
     * @return one outcome per file, in the order of {@code files}; each holds the content or the
     *     exception {@link #read} would have thrown for that file
     */
    public static List<HostFileRead> readEach(List<Path> files, int maxBytes) {
        return readEach(files, maxBytes, NOTHING);
    }

    static List<HostFileRead> readEach(List<Path> files, int maxBytes, BeforeOpen beforeOpen) {
        READS_BY_THREAD.get()[0] += files.size();
        if (maxBytes < 0) {
            throw new IllegalArgumentException("maxBytes < 0: " + maxBytes);
        }
        return FileBatch.readEach(List.copyOf(files), maxBytes, beforeOpen);
    }

    static byte[] read(Path file, int maxBytes, BeforeOpen beforeOpen) throws IOException {
        READS_BY_THREAD.get()[0]++;
        if (maxBytes < 0) {
            throw new IllegalArgumentException("maxBytes < 0: " + maxBytes);
        }
        requireRegular(file);
        try (FileChannel ch = open(file, beforeOpen)) {
            return readAtMost(file, ch, maxBytes);
        }
    }

    static void requireRegular(Path file) throws IOException {
        BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
        if (!a.isRegularFile()) {
            throw new RefusedFileException(file, "is not a regular file but " + describe(file, a));
        }
    }

    private static String describe(Path file, BasicFileAttributes a) {
        if (a.isDirectory()) {
            return FileNode.Type.FOLDER.words();
        }
        try {
            return FileNode.typeOfMode(((Number) Files.getAttribute(file, "unix:mode")).intValue()).words();
        } catch (IOException | RuntimeException e) {
            return FileNode.Type.OTHER.words();
        }
    }

    private static FileChannel open(Path file, BeforeOpen beforeOpen) throws IOException {
        CompletableFuture<FileChannel> opened = new CompletableFuture<>();
        try {
            OPENERS.execute(
                    () -> {
                        try {
                            opened.complete(openHere(file, beforeOpen));
                        } catch (IOException e) {
                            opened.completeExceptionally(new UncheckedIOException(e));
                        } catch (RuntimeException | Error e) {
                            opened.completeExceptionally(e);
                        }
                    });
        } catch (RejectedExecutionException e) {
            throw noOpener(file);
        }
        long start = System.nanoTime();
        long nextUnblock = start + UNBLOCK_AFTER_NANOS;
        long deadline = start + TimeUnit.SECONDS.toNanos(OPEN_TIMEOUT_SECONDS);
        while (true) {
            long now = System.nanoTime();
            try {
                return opened.get(Math.max(0, Math.min(deadline, nextUnblock) - now), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                now = System.nanoTime();
                if (now - deadline >= 0) {
                    abandon(opened);
                    throw notOpenedInTime(file);
                }
                releaseFifoOpen(file);
                nextUnblock = now + UNBLOCK_EVERY_NANOS;
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof UncheckedIOException) {
                    throw ((UncheckedIOException) cause).getCause();
                }
                if (cause instanceof RuntimeException) {
                    throw (RuntimeException) cause;
                }
                if (cause instanceof Error) {
                    throw (Error) cause;
                }
                throw new IOException(cause);
            } catch (InterruptedException e) {
                abandon(opened);
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while opening " + file);
            }
        }
    }

    static RefusedFileException noOpener(Path file) {
        return new RefusedFileException(
                file,
                "was not opened: " + MAX_OPENERS + " earlier opens are still blocked, each on a FIFO put in place of a file");
    }

    static RefusedFileException notOpenedInTime(Path file) {
        return new RefusedFileException(
                file,
                "did not open within "
                        + OPEN_TIMEOUT_SECONDS
                        + " s: it is not a regular file (a FIFO put there after it was looked at,"
                        + " which this process may not open for writing)");
    }

    /** On an opener thread: opens, then refuses what cannot seek (a FIFO or socket). */
    static FileChannel openHere(Path file, BeforeOpen beforeOpen) throws IOException {
        beforeOpen.run(file);
        FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
        try {
            ch.position();
        } catch (IOException notSeekable) {
            ch.close();
            throw new RefusedFileException(
                    file,
                    "is not a regular file: a FIFO or socket was put there after it was looked at ("
                            + notSeekable.getMessage()
                            + ")");
        }
        return ch;
    }

    /** Nobody waits for {@code opened} any more: close what it opens, whenever that happens. */
    private static void abandon(CompletableFuture<FileChannel> opened) {
        opened.whenComplete(
                (ch, failure) -> {
                    if (ch != null) {
                        try {
                            ch.close();
                        } catch (IOException e) {
                            // nothing was read from it
                        }
                    }
                });
    }

    /**
     * Gives an open that waits on the FIFO at {@code file} its writer: opening a FIFO read-write
     * never blocks on Linux and wakes every reader waiting in {@code open}. Done on an opener
     * thread, so that whatever {@code file} has become meanwhile cannot hold up the caller.
     */
    static void releaseFifoOpen(Path file) {
        try {
            OPENERS.execute(
                    () -> {
                        try {
                            int mode = ((Number) Files.getAttribute(file, "unix:mode")).intValue();
                            if (FileNode.typeOfMode(mode) == FileNode.Type.FIFO) {
                                FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE).close();
                            }
                        } catch (IOException | RuntimeException e) {
                            // cannot release it: the caller's deadline still holds
                        }
                    });
        } catch (RejectedExecutionException e) {
            // every opener is busy: the caller's deadline still holds
        }
    }

    static byte[] readAtMost(Path file, FileChannel ch, int maxBytes) throws IOException {
        long limit = (long) maxBytes + 1;
        // a regular file's size in one allocation (a large file copied through doubling buffers
        // would need twice its size and more); sysfs and /proc report 4096 or 0 and grow from there
        int initial = (int) Math.min(limit, Math.max(8192, ch.size() + 1));
        ByteBuffer buf = ByteBuffer.allocate(initial);
        while (true) {
            if (!buf.hasRemaining()) {
                if (buf.capacity() >= limit) {
                    break;
                }
                ByteBuffer bigger = ByteBuffer.allocate((int) Math.min(limit, (long) buf.capacity() * 2));
                buf.flip();
                bigger.put(buf);
                buf = bigger;
            }
            if (ch.read(buf) < 0) {
                break;
            }
        }
        if (buf.position() > maxBytes) {
            throw new RefusedFileException(file, "holds more than " + maxBytes + " bytes");
        }
        return Arrays.copyOf(buf.array(), buf.position());
    }

    /**
     * A file refused for what it is, not for an operating system error: not a regular file, too
     * large, or not opened in time. {@link #getReason()} is a phrase that follows the path ({@code
     * is not a regular file but a FIFO (named pipe)}, {@code holds more than 65536 bytes}).
     */
    @PublicEvolving
    public static final class RefusedFileException extends FileSystemException {

        private static final long serialVersionUID = 1L;

        /** Refuses {@code file} for {@code reason}, a phrase that follows the path. */
        public RefusedFileException(Path file, String reason) {
            super(file.toString(), null, reason);
        }

        /** {@code <path> <reason>}. */
        @Override
        public String getMessage() {
            return getFile() + " " + getReason();
        }
    }

    /** A step between the look and the open; tests swap a FIFO in there. */
    @FunctionalInterface
    interface BeforeOpen {
        void run(Path file) throws IOException;
    }
}
