package io.flinkdevices.sdk.host;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One opener task that reads several files one after the other, watched by the caller with the
 * guarantees of a single {@link HostFiles#read}: the caller gives an open that waits on a FIFO its
 * writer, and refuses a file whose open has not returned within {@value
 * HostFiles#OPEN_TIMEOUT_SECONDS} s; the files after it are read by a fresh task. The task tells
 * the caller which file it is at through {@link #at} and {@link #atSince}, written after the
 * outcome of the file before, so that the caller may take every outcome before {@link #at}.
 */
final class FileBatch implements Runnable {

    private final List<Path> files;
    private final int from;
    private final int maxBytes;
    private final HostFiles.BeforeOpen beforeOpen;
    private final HostFileRead[] out;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    /** The file being read; {@code files.size()} when all are read. */
    private volatile int at;
    /** {@link System#nanoTime()} when the task came to {@link #at}. */
    private volatile long atSince;
    /** Set by a caller that stopped waiting: the task reads no further file. */
    private volatile boolean abandoned;

    private FileBatch(List<Path> files, int from, int maxBytes, HostFiles.BeforeOpen beforeOpen, HostFileRead[] out) {
        this.files = files;
        this.from = from;
        this.maxBytes = maxBytes;
        this.beforeOpen = beforeOpen;
        this.out = out;
        this.at = from;
        this.atSince = System.nanoTime();
    }

    /** Every file's outcome, in order; never throws for one file's sake. */
    static List<HostFileRead> readEach(List<Path> files, int maxBytes, HostFiles.BeforeOpen beforeOpen) {
        HostFileRead[] results = new HostFileRead[files.size()];
        int next = 0;
        while (next < files.size()) {
            HostFileRead[] mine = new HostFileRead[files.size()];
            next = new FileBatch(files, next, maxBytes, beforeOpen, mine).runWatched(results);
        }
        return List.of(results);
    }

    @Override
    public void run() {
        try {
            for (int i = from; i < files.size() && !abandoned; i++) {
                out[i] = readOne(files.get(i));
                atSince = System.nanoTime();
                at = i + 1;
            }
            done.complete(null);
        } catch (RuntimeException | Error e) {
            done.completeExceptionally(e);
        }
    }

    private HostFileRead readOne(Path file) {
        try {
            HostFiles.requireRegular(file);
            try (FileChannel ch = HostFiles.openHere(file, beforeOpen)) {
                return HostFileRead.of(file, HostFiles.readAtMost(file, ch, maxBytes));
            }
        } catch (IOException e) {
            return HostFileRead.failed(file, e);
        }
    }

    /**
     * Runs this task on an opener and waits for it; copies the outcomes it reached into {@code
     * results} and returns the index of the first file still to read.
     */
    private int runWatched(HostFileRead[] results) {
        try {
            HostFiles.OPENERS.execute(this);
        } catch (RejectedExecutionException e) {
            for (int i = from; i < files.size(); i++) {
                results[i] = HostFileRead.failed(files.get(i), HostFiles.noOpener(files.get(i)));
            }
            return files.size();
        }
        int lastSeen = -1;
        long nextUnblock = 0;
        while (true) {
            int current = at;
            long since = atSince;
            if (current != lastSeen) {
                lastSeen = current;
                nextUnblock = since + HostFiles.UNBLOCK_AFTER_NANOS;
            }
            long deadline = since + TimeUnit.SECONDS.toNanos(HostFiles.OPEN_TIMEOUT_SECONDS);
            try {
                done.get(Math.max(0, Math.min(deadline, nextUnblock) - System.nanoTime()), TimeUnit.NANOSECONDS);
                System.arraycopy(out, from, results, from, files.size() - from);
                return files.size();
            } catch (TimeoutException e) {
                long now = System.nanoTime();
                if (at != current) {
                    continue; // moved on meanwhile: watch the next file
                }
                if (now - deadline >= 0) {
                    abandoned = true;
                    System.arraycopy(out, from, results, from, current - from);
                    results[current] = HostFileRead.failed(files.get(current), HostFiles.notOpenedInTime(files.get(current)));
                    return current + 1;
                }
                HostFiles.releaseFifoOpen(files.get(current));
                nextUnblock = now + HostFiles.UNBLOCK_EVERY_NANOS;
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (cause instanceof Error) {
                    throw (Error) cause;
                }
                throw (RuntimeException) cause;
            } catch (InterruptedException e) {
                abandoned = true;
                Thread.currentThread().interrupt();
                int reached = at;
                System.arraycopy(out, from, results, from, reached - from);
                for (int i = reached; i < files.size(); i++) {
                    results[i] = HostFileRead.failed(files.get(i), new InterruptedIOException("interrupted while opening " + files.get(i)));
                }
                return files.size();
            }
        }
    }
}
