package io.flinkdevices.job.batch;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The thread a {@link DeviceBatchOperator}'s backend lives on: the backend is opened, started,
 * finished and closed there, in the order the task thread asks, while the task thread waits for
 * each call at most the backend timeout of {@link BatchSettings}. A call that never returns (a
 * driver stuck in a native wait, a socket without a timeout) then fails the task with a {@link
 * TimeoutException} instead of holding the task thread, and with it every checkpoint of the job,
 * for ever. The stuck call keeps its thread (a daemon), and the backend is closed on that thread
 * if the call ever returns, never beside it, since closing frees memory the device may still be
 * writing.
 *
 * <p>A {@link #post posted} call ({@code start}, which only queues work) is not waited for: the
 * task thread goes on filling the next batch while it runs, and a failure or an overrun of its
 * deadline is reported by the next call the task thread waits for. So a batch costs one hand-over
 * and back ({@code finish}), and a backend that does its work in {@code start} runs it beside the
 * task's filling. The task thread spins for {@link #SPIN_NANOS} before it parks, so a call that
 * returns at once costs it no wake-up; the backend thread parks as soon as it is idle.
 *
 * <p>One task thread calls {@link #call}, {@link #post} and {@link #close}; one backend thread runs
 * the calls.
 */
final class BackendThread {

    /** How long the task thread spins for a call before it parks: about two wake-ups. */
    static final long SPIN_NANOS = 20_000;

    /** One call to run on the backend thread. */
    @FunctionalInterface
    interface Call<T> {
        T call() throws Exception;
    }

    private static final class Request {
        Call<?> call;
        String what;
        long deadline;
        boolean waited;
        Object result;
        Throwable failure;
    }

    private final Thread thread;
    private final long timeoutNanos;
    private final Request[] ring;
    private final Object lock = new Object();

    /** Requests posted (task thread) and completed (backend thread); request k is ring[k % length]. */
    private volatile long posted;

    private volatile long completed;
    private volatile boolean taskParked;
    private volatile boolean backendParked;
    private volatile boolean stopped;
    /** The first failure of a posted call nobody waited for, reported at the next wait. */
    private volatile String postedFailure;

    private volatile Throwable postedCause;
    private final Thread task;
    /** Set on the task thread when it gave up on a call: no further call is made. */
    private String abandoned;

    /** Guarded by lock: runs on the backend thread once the running call returns, then it ends. */
    private Consumer<Object> whenFree;

    private BackendThread(String name, long timeoutNanos, int queue) {
        this.timeoutNanos = timeoutNanos;
        this.ring = new Request[queue];
        for (int i = 0; i < queue; i++) {
            ring[i] = new Request();
        }
        this.task = Thread.currentThread();
        this.thread = new Thread(this::loop, name);
        thread.setDaemon(true);
    }

    /**
     * Starts a backend thread named {@code name}, for calls from this thread, each of which may take
     * {@code timeoutNanos}, with up to {@code queue} calls posted and not yet run.
     */
    static BackendThread start(String name, long timeoutNanos, int queue) {
        BackendThread t = new BackendThread(name, timeoutNanos, Math.max(2, queue));
        t.thread.start();
        return t;
    }

    /** The thread's name, for messages. */
    String name() {
        return thread.getName();
    }

    /**
     * Runs {@code call} on the backend thread after everything posted before it and returns its
     * result, waiting at most the timeout for each of them.
     *
     * @throws TimeoutException when it, or a call posted before it, did not return in time; every
     *     later call fails at once
     * @throws InterruptedException when the task thread is interrupted (Flink cancels the task)
     *     while it waits; the call goes on on its thread and every later call fails at once
     * @throws IllegalStateException when a posted call failed (naming it, its exception the cause)
     * @throws Exception what the call threw ({@link Error}s as an {@link IllegalStateException})
     */
    @SuppressWarnings("unchecked")
    <T> T call(String what, Call<T> call) throws Exception {
        long seq = enqueue(what, call, true);
        await(seq);
        Request r = ring[(int) ((seq - 1) % ring.length)];
        Throwable t = r.failure;
        Object result = r.result;
        r.failure = null;
        r.result = null;
        r.call = null;
        throwPostedFailure();
        if (t == null) {
            return (T) result;
        }
        if (t instanceof Exception) {
            throw (Exception) t;
        }
        throw new IllegalStateException(t.toString(), t);
    }

    /**
     * Queues {@code call} and returns at once; a failure of it is thrown by the next {@link #call},
     * which also waits for it, bounded by its own deadline.
     */
    void post(String what, Call<?> call) throws Exception {
        throwPostedFailure();
        enqueue(what, call, false);
    }

    private long enqueue(String what, Call<?> call, boolean waited) throws Exception {
        if (abandoned != null) {
            throw new IllegalStateException("the backend is still in " + abandoned + " on thread '" + name()
                    + "', which did not return: no further call is made");
        }
        long seq = posted + 1;
        if (seq - completed > ring.length) {
            await(seq - ring.length); // room for one more
        }
        Request r = ring[(int) ((seq - 1) % ring.length)];
        r.call = call;
        r.what = what;
        r.waited = waited;
        r.deadline = System.nanoTime() + timeoutNanos;
        posted = seq;
        if (backendParked) {
            LockSupport.unpark(thread);
        }
        return seq;
    }

    /** Waits until request {@code seq} completed, failing past the deadline of any request before it. */
    private void await(long seq) throws Exception {
        long spinUntil = System.nanoTime() + SPIN_NANOS;
        while (true) {
            long c = completed;
            if (c >= seq) {
                return;
            }
            long now = System.nanoTime();
            if (now - spinUntil < 0) {
                Thread.onSpinWait();
                continue;
            }
            // request c is the oldest not yet returned; only this thread writes the ring
            Request oldest = ring[(int) (c % ring.length)];
            if (now - oldest.deadline >= 0) {
                if (completed != c) {
                    continue; // it returned just now
                }
                abandoned = oldest.what;
                throw new TimeoutException(oldest.what + " did not return within " + millis(timeoutNanos)
                        + " (the backend timeout of the operator's BatchSettings); it is left running on thread '"
                        + name() + "', and the backend is closed there if it ever returns");
            }
            taskParked = true;
            if (completed == c) {
                LockSupport.parkNanos(this, oldest.deadline - now);
            }
            taskParked = false;
            if (Thread.interrupted()) {
                abandoned = oldest.what;
                throw new InterruptedException("interrupted while waiting for " + oldest.what + " on thread '"
                        + name() + "'");
            }
        }
    }

    private void throwPostedFailure() {
        String failed = postedFailure;
        if (failed != null) {
            postedFailure = null;
            throw new IllegalStateException(failed, postedCause);
        }
    }

    /**
     * Runs {@code close} on the backend thread with the last call's result (the backend, for a
     * stuck open) and ends the thread: now, after the calls posted before it and waiting at most
     * the timeout, when nothing is stuck; after the stuck call returns, without waiting, when one is.
     *
     * @return null when closed, else why not yet (for one WARN line)
     */
    String close(Consumer<Object> close) {
        Call<Object> closing = () -> {
            close.accept(null);
            return null;
        };
        boolean closeQueued = false;
        if (abandoned == null) {
            closeQueued = true;
            try {
                call("close", closing);
                stop();
                return null;
            } catch (TimeoutException e) {
                // fall through: a call before the close, or the close itself, is stuck
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                stop();
                return "close failed: " + e.getMessage();
            }
        }
        synchronized (lock) {
            long c = completed;
            if (c < posted) {
                whenFree = close;
                stop();
                Request stuck = ring[(int) (c % ring.length)];
                return stuck.what + " has not returned after "
                        + millis(System.nanoTime() - (stuck.deadline - timeoutNanos)) + "; thread '" + name()
                        + "' keeps the backend until it does, and closes it then";
            }
        }
        if (closeQueued) {
            stop(); // the close ran after the stuck call returned
            return null;
        }
        // the call given up on has returned since: nothing runs, so the backend can close here
        abandoned = null;
        try {
            call("close", closing);
            return null;
        } catch (Exception e) {
            return "close failed: " + e.getMessage();
        } finally {
            stop();
        }
    }

    private void stop() {
        stopped = true;
        LockSupport.unpark(thread);
    }

    private void loop() {
        while (true) {
            long done = completed;
            if (done == posted) {
                if (stopped) {
                    return;
                }
                // no spin here: an idle backend thread that spun cost the task's own work its core on a
                // busy host (PipelineThroughput at batch 64: process CPU up by half)
                backendParked = true;
                if (completed == posted && !stopped) {
                    LockSupport.park(this);
                }
                backendParked = false;
                continue;
            }
            Request r = ring[(int) (done % ring.length)];
            Object result = null;
            Throwable failure = null;
            try {
                result = r.call.call();
            } catch (Throwable e) {
                failure = e;
            }
            if (r.waited) {
                r.result = result;
                r.failure = failure;
            } else {
                r.call = null;
                if (failure != null && postedFailure == null) {
                    postedCause = failure;
                    postedFailure = r.what + " failed: "
                            + (failure.getMessage() == null ? failure.toString() : failure.getMessage());
                }
            }
            Consumer<Object> then;
            synchronized (lock) {
                completed = done + 1;
                then = whenFree;
                whenFree = null;
            }
            if (taskParked) {
                LockSupport.unpark(task);
            }
            if (then != null) {
                try {
                    then.accept(result);
                } catch (RuntimeException e) {
                    // the task is gone; nothing is left to report to
                }
                return;
            }
        }
    }

    static String millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos) + " ms";
    }
}
