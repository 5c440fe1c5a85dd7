package io.flinkdevices.model.onnx.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Groups single rows into batches and runs at most {@code maxInFlight} batches at a time.
 *
 * <p>A batch goes out when it holds {@code batchSize} rows, when the rows waiting here plus those in
 * running batches reach {@code capacity} (the most rows Flink's async operator hands out before it
 * waits for results: no further row can come, so waiting longer only adds latency), or when its
 * first row has waited {@code batchWait}. Nothing here blocks the caller: batches beyond {@code
 * maxInFlight} queue, and the queue is bounded by {@code capacity} rows because the async operator
 * sends no more. A batch that runs longer than {@code timeout} is cancelled and its rows fail.
 */
public final class MicroBatcher<I, O> implements AutoCloseable {

    /** Runs one batch: one result per row, in order. */
    public interface Runner<I, O> {
        List<O> run(List<I> rows, Cancellation cancellation) throws Exception;
    }

    /** Lets a running batch say how it is stopped when it runs past the timeout. */
    public static final class Cancellation {
        private volatile Runnable action = () -> {};
        private final AtomicBoolean cancelled = new AtomicBoolean();

        public void onCancel(Runnable action) {
            this.action = action;
            if (cancelled.get()) {
                action.run();
            }
        }

        void cancel() {
            if (cancelled.compareAndSet(false, true)) {
                action.run();
            }
        }
    }

    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final Runner<I, O> runner;
    private final int batchSize;
    private final int capacity;
    private final long batchWaitNanos;
    private final Duration timeout;
    private final String timeoutOption;
    private final ExecutorService workers;
    private final ScheduledExecutorService timer;

    private final Object lock = new Object();
    private List<I> pendingRows = new ArrayList<>();
    private List<CompletableFuture<? super O>> pendingFutures = new ArrayList<>();
    private int inFlightRows;
    /** When the first row of the rows waiting came, by {@link System#nanoTime()}. */
    private long firstRowNanos;
    /** Whether a batch-wait timer is scheduled: at most one is, so that a busy task schedules few. */
    private boolean waitTimerSet;
    private boolean closed;

    public MicroBatcher(Runner<I, O> runner, int batchSize, int maxInFlight, int capacity, Duration batchWait,
            Duration timeout, String timeoutOption, String threadName) {
        this.runner = runner;
        this.batchSize = batchSize;
        this.capacity = Math.max(1, capacity);
        this.batchWaitNanos = batchWait.toNanos();
        this.timeout = timeout;
        this.timeoutOption = timeoutOption;
        int id = INSTANCES.incrementAndGet();
        this.workers = new ThreadPoolExecutor(maxInFlight, maxInFlight, 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), threads(threadName + "-" + id + "-batch"));
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, threads(threadName + "-" + id + "-timer"));
        t.setRemoveOnCancelPolicy(true);
        this.timer = t;
    }

    /** Adds a row; the future completes with its result once its batch ran. */
    public CompletableFuture<O> submit(I row) {
        CompletableFuture<O> future = new CompletableFuture<>();
        submit(row, future);
        return future;
    }

    /**
     * Adds a row whose result completes {@code future} once its batch ran: the caller's own future,
     * so that no further future per row stands between the batch and the caller.
     */
    public void submit(I row, CompletableFuture<? super O> future) {
        Batch<I, O> ready = null;
        synchronized (lock) {
            if (closed) {
                future.completeExceptionally(new IllegalStateException("the model's batcher is closed"));
                return;
            }
            pendingRows.add(row);
            pendingFutures.add(future);
            if (pendingRows.size() >= batchSize || pendingRows.size() + inFlightRows >= capacity || batchWaitNanos == 0) {
                ready = takePending();
            } else if (pendingRows.size() == 1) {
                firstRowNanos = System.nanoTime();
                if (!waitTimerSet) {
                    scheduleWaitTimer(batchWaitNanos);
                }
            }
        }
        if (ready != null) {
            dispatch(ready);
        }
    }

    /** Rows waiting for a batch, and rows in batches not finished: for tests and metrics. */
    public int rowsHeld() {
        synchronized (lock) {
            return pendingRows.size() + inFlightRows;
        }
    }

    /** Under the lock. */
    private void scheduleWaitTimer(long delayNanos) {
        try {
            timer.schedule(this::flushIfWaited, delayNanos, TimeUnit.NANOSECONDS);
            waitTimerSet = true;
        } catch (RuntimeException e) {
            // the timer is shut down: close() fails the rows still waiting
        }
    }

    /**
     * Sends the waiting rows once the first of them has waited {@code batchWait}; rows that came
     * later than the batch the timer was set for get a timer for the rest of their wait.
     */
    private void flushIfWaited() {
        Batch<I, O> ready = null;
        synchronized (lock) {
            waitTimerSet = false;
            if (closed || pendingRows.isEmpty()) {
                return;
            }
            long waited = System.nanoTime() - firstRowNanos;
            if (waited >= batchWaitNanos) {
                ready = takePending();
            } else {
                scheduleWaitTimer(batchWaitNanos - waited);
            }
        }
        if (ready != null) {
            dispatch(ready);
        }
    }

    private Batch<I, O> takePending() {
        Batch<I, O> b = new Batch<>(pendingRows, pendingFutures);
        pendingRows = new ArrayList<>(batchSize);
        pendingFutures = new ArrayList<>(batchSize);
        inFlightRows += b.rows.size();
        return b;
    }

    private void dispatch(Batch<I, O> batch) {
        try {
            workers.execute(() -> run(batch));
        } catch (RuntimeException e) {
            finish(batch, null, new IllegalStateException("the model's batcher is closed", e));
        }
    }

    private void run(Batch<I, O> batch) {
        Cancellation cancellation = new Cancellation();
        ScheduledFuture<?> watchdog = null;
        try {
            // the rows fail with the timeout before the run is stopped, so that they never report the stop instead
            watchdog = timer.schedule(() -> {
                finish(batch, null, new TimeoutException("a batch of " + batch.rows.size() + " rows ran longer than '"
                        + timeoutOption + "' = " + timeout.toMillis() + " ms; it was cancelled (raise '" + timeoutOption
                        + "', or lower 'batch-size')"));
                cancellation.cancel();
            }, timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RuntimeException e) {
            finish(batch, null, new IllegalStateException("the model's batcher is closed", e));
            return;
        }
        List<O> results = null;
        Throwable failure = null;
        try {
            results = runner.run(batch.rows, cancellation);
            if (results == null || results.size() != batch.rows.size()) {
                failure = new IllegalStateException("the model returned " + (results == null ? "nothing" : results.size()
                        + " results") + " for a batch of " + batch.rows.size() + " rows");
            }
        } catch (Throwable t) {
            failure = t;
        } finally {
            watchdog.cancel(false);
        }
        finish(batch, failure == null ? results : null, failure);
    }

    private void finish(Batch<I, O> batch, List<O> results, Throwable failure) {
        if (!batch.done.compareAndSet(false, true)) {
            return;
        }
        synchronized (lock) {
            inFlightRows -= batch.rows.size();
        }
        for (int i = 0; i < batch.futures.size(); i++) {
            if (failure != null) {
                batch.futures.get(i).completeExceptionally(failure);
            } else {
                batch.futures.get(i).complete(results.get(i));
            }
        }
    }

    /**
     * Fails the rows still waiting, cancels the running batches and stops the threads, waiting at
     * most {@code grace} for them.
     *
     * @return whether every batch thread ended within the grace (if not, a native run may still be
     *     going on, and whatever it uses must not be freed)
     */
    public boolean close(Duration grace) {
        Batch<I, O> left;
        synchronized (lock) {
            if (closed) {
                return workers.isTerminated();
            }
            closed = true;
            left = pendingRows.isEmpty() ? null : takePending();
        }
        if (left != null) {
            finish(left, null, new IllegalStateException("the model was closed before this row's batch ran"));
        }
        timer.shutdownNow();
        workers.shutdownNow();
        try {
            return workers.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public void close() {
        close(Duration.ofSeconds(10));
    }

    private static ThreadFactory threads(String name) {
        AtomicInteger n = new AtomicInteger();
        ThreadFactory base = Executors.defaultThreadFactory();
        return r -> {
            Thread t = base.newThread(r);
            t.setName(name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    private static final class Batch<I, O> {
        final List<I> rows;
        final List<CompletableFuture<? super O>> futures;
        final AtomicBoolean done = new AtomicBoolean();

        Batch(List<I> rows, List<CompletableFuture<? super O>> futures) {
            this.rows = rows;
            this.futures = futures;
        }
    }
}
