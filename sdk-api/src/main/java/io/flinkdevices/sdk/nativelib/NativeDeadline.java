package io.flinkdevices.sdk.nativelib;

import io.flinkdevices.sdk.DeviceDriverException;

import org.apache.flink.annotation.PublicEvolving;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs calls into a native library that may never return with a deadline, so that a TaskManager
 * does not wait on them without a bound.
 *
 * <p>A device whose driver no longer answers (a GPU fallen off the bus, a board in a bad state)
 * can leave a call into its vendor library blocked in the kernel: the reason drivers bound every
 * tool they run with a timeout. A call in the TaskManager's own process cannot be killed, so
 * {@link #call} runs it on a daemon thread (one of at most {@value #MAX_CALLERS}, kept a few seconds
 * for the next call) and waits for it at most the timeout; a call
 * that has not returned by then is left running and reported as one {@link
 * DeviceDriverException} naming the library, what was called and the timeout's key. Until that
 * call returns, this deadline does not start another one: each later {@link #call} fails at once,
 * saying since when the library has not returned, instead of leaving one more thread behind.
 * Calls that are merely under way do not stop others: several drivers may call at once. Each
 * call also runs under {@link NativeGuard}: a {@link LinkageError} comes back as a {@link
 * DeviceDriverException} too.
 *
 * <p>Drivers that share one library's state in a class loader share one instance (the NVIDIA
 * driver: one per NVML library path, one for CUDA), so that once the library is blocked every one
 * of them is refused at once; an instance per driver makes each wait out its own timeout (the
 * OpenCL driver keeps one per resource). Thread-safe.
 */
@PublicEvolving
public final class NativeDeadline {

    private static final AtomicInteger THREADS = new AtomicInteger();
    /** More calls under way at once than any TaskManager makes: a bound on threads left behind. */
    static final int MAX_CALLERS = 16;

    /**
     * The threads that make the calls, shared by every deadline of this class loader and kept 10 s
     * after their last call: starting a thread for each call would cost more than a later
     * discovery itself (hundreds of microseconds on a busy host).
     */
    private static final ThreadPoolExecutor CALLERS =
            new ThreadPoolExecutor(0, MAX_CALLERS, 10, TimeUnit.SECONDS, new SynchronousQueue<>(), new CallerThreads());

    private final String library;
    private final String installHint;
    private final Object lock = new Object();
    /** The call that did not return within its timeout, and what it called since when; null when none. */
    private Outcome<?> hungCall;
    private String hung;

    /**
     * @param library the native library, e.g. {@code libnvidia-ml.so.1 (NVIDIA management
     *     library)}, as messages name it
     * @param installHint how to get it, for a library that cannot be loaded (see {@link
     *     NativeGuard#call})
     */
    public NativeDeadline(String library, String installHint) {
        this.library = library;
        this.installHint = installHint;
    }

    /**
     * Runs {@code call} on a daemon thread and waits for it at most {@code timeout}.
     *
     * @param what what is called, for messages, e.g. {@code discovery (nvmlInit_v2 and the GPU
     *     queries)}
     * @param timeout how long to wait
     * @param timeoutKey the full configuration key of {@code timeout}, for messages
     * @return what {@code call} returned
     * @throws DeviceDriverException what {@code call} threw (a {@link LinkageError} as one too);
     *     that it did not return within {@code timeout}; that an earlier call has not returned yet
     */
    public <T> T call(String what, Duration timeout, String timeoutKey, NativeGuard.NativeCall<T> call)
            throws DeviceDriverException {
        Outcome<T> outcome = new Outcome<>();
        // the wall clock only: formatting it (java.time's zone rules) waits until a call times out
        long startedMillis = System.currentTimeMillis();
        synchronized (lock) {
            if (hung != null) {
                throw new DeviceDriverException(library + " has not returned from " + hung + " yet (" + timeoutKey
                        + ": " + format(timeout) + "); it is not called again until it returns. A device whose driver"
                        + " no longer answers does this: check the device and the kernel log (dmesg) of this host");
            }
        }
        try {
            CALLERS.execute(new Runner<>(this, call, outcome));
        } catch (RejectedExecutionException e) {
            throw new DeviceDriverException(library + ": " + MAX_CALLERS + " calls into native libraries are under way or"
                    + " have not returned; " + what + " is not started beside them");
        } catch (OutOfMemoryError e) {
            throw new DeviceDriverException(library + ": cannot start a thread for " + what + " (" + e + ")", e);
        }
        try {
            if (!outcome.await(timeout) && abandoned(outcome, what, startedMillis)) {
                throw new DeviceDriverException(timeoutKey + ": " + library + " did not return from " + what + " within "
                        + format(timeout) + "; the call is left running on a daemon thread and the library is not called"
                        + " again until it returns. A device whose driver no longer answers does this: check the device"
                        + " and the kernel log (dmesg) of this host");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DeviceDriverException(library + ": interrupted while waiting for " + what, e);
        }
        return outcome.result();
    }

    /** Whether a call did not return within its timeout and has not returned since. */
    public boolean blocked() {
        synchronized (lock) {
            return hung != null;
        }
    }

    /** Marks {@code outcome}'s call as not returned, unless it has returned meanwhile. */
    private boolean abandoned(Outcome<?> outcome, String what, long startedMillis) {
        String started = what + ", called at "
                + DateTimeFormatter.ofPattern("HH:mm:ss").format(Instant.ofEpochMilli(startedMillis).atZone(ZoneId.systemDefault()));
        synchronized (lock) {
            if (outcome.done()) {
                return false;
            }
            hungCall = outcome;
            hung = started;
            return true;
        }
    }

    /** Hands over what a call gave, atomically with {@link #abandoned}, and frees the library if it was that call. */
    private <T> void returned(Outcome<T> outcome, T value, DeviceDriverException failure) {
        synchronized (lock) {
            if (hungCall == outcome) {
                hungCall = null;
                hung = null;
            }
            outcome.set(value, failure);
        }
    }

    private static String format(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.getSeconds() + " s" : d.truncatedTo(ChronoUnit.MILLIS).toMillis() + " ms";
    }

    /** Daemon threads without a context class loader: a call left running keeps no class loader alive. */
    private static final class CallerThreads implements ThreadFactory {
        @Override
        public Thread newThread(Runnable r) {
            Thread t = new Thread(r, "flink-devices-native-call-" + THREADS.incrementAndGet());
            t.setDaemon(true);
            t.setContextClassLoader(null);
            return t;
        }
    }

    /** The call, on a thread of {@link #CALLERS}: the outcome, and the library free again. */
    private static final class Runner<T> implements Runnable {
        private final NativeDeadline deadline;
        private final NativeGuard.NativeCall<T> call;
        private final Outcome<T> outcome;

        Runner(NativeDeadline deadline, NativeGuard.NativeCall<T> call, Outcome<T> outcome) {
            this.deadline = deadline;
            this.call = call;
            this.outcome = outcome;
        }

        @Override
        public void run() {
            T value = null;
            DeviceDriverException failure = null;
            try {
                value = NativeGuard.call(deadline.library, deadline.installHint, call);
            } catch (DeviceDriverException e) {
                failure = e;
            } catch (Error e) {
                failure = new DeviceDriverException(deadline.library + ": " + e, e);
            }
            deadline.returned(outcome, value, failure);
        }
    }

    /** What the call returned or threw, handed from its thread to the waiting one. */
    private static final class Outcome<T> {
        private boolean done;
        private T value;
        private DeviceDriverException failure;

        synchronized boolean done() {
            return done;
        }

        synchronized void set(T value, DeviceDriverException failure) {
            this.value = value;
            this.failure = failure;
            this.done = true;
            notifyAll();
        }

        synchronized boolean await(Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!done) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return true;
        }

        synchronized T result() throws DeviceDriverException {
            if (failure != null) {
                throw failure;
            }
            return value;
        }
    }
}
