package io.flinkdevices.sdk.process;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Reads one of a program's output streams to its end on a pooled thread, keeping a head (stdout)
 * or a tail (stderr) of it, so that neither stream can fill its pipe and block the program.
 */
final class OutputDrain implements Runnable {

    /**
     * Threads that drain programs' output. Reused between runs: starting two threads per run
     * was a measurable part of a short program's cost (an nvidia-smi query takes ~2 ms).
     */
    private static final ExecutorService DRAINS =
            Executors.newCachedThreadPool(
                    r -> {
                        Thread t = new Thread(r, "external-command-drain");
                        t.setDaemon(true);
                        return t;
                    });

    private final CountDownLatch finished = new CountDownLatch(1);
    private final InputStream in;
    private final int limit;
    private final boolean keepTail;
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    private volatile boolean truncated;

    /**
     * @param limit how many bytes to keep
     * @param keepTail whether to keep the last {@code limit} bytes, else the first
     */
    OutputDrain(InputStream in, int limit, boolean keepTail) {
        this.in = in;
        this.limit = limit;
        this.keepTail = keepTail;
    }

    @Override
    public void run() {
        byte[] chunk = new byte[8192];
        try (InputStream s = in) {
            int n;
            while ((n = s.read(chunk)) >= 0) {
                synchronized (buffer) {
                    if (keepTail) {
                        buffer.write(chunk, 0, n);
                        if (buffer.size() > limit * 2) {
                            byte[] all = buffer.toByteArray();
                            buffer.reset();
                            buffer.write(all, all.length - limit, limit);
                            truncated = true;
                        }
                    } else if (buffer.size() < limit) {
                        buffer.write(chunk, 0, Math.min(n, limit - buffer.size()));
                        if (buffer.size() >= limit) {
                            truncated = true;
                        }
                    } else {
                        truncated = true;
                    }
                }
            }
        } catch (IOException ignored) {
            // the stream closes when the process is killed
        } finally {
            finished.countDown();
        }
    }

    void start() {
        DRAINS.execute(this);
    }

    /** Waits at most {@code d} for the stream's end; whether it came. */
    boolean join(Duration d) throws InterruptedException {
        return finished.await(Math.max(1, d.toMillis()), TimeUnit.MILLISECONDS);
    }

    /** Whether the stream held more than was kept. */
    boolean truncated() {
        return truncated;
    }

    /** What was kept so far, decoded as UTF-8. */
    String text() {
        byte[] bytes;
        synchronized (buffer) {
            bytes = buffer.toByteArray();
        }
        if (keepTail && bytes.length > limit) {
            bytes = Arrays.copyOfRange(bytes, bytes.length - limit, bytes.length);
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
