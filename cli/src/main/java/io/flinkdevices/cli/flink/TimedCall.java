package io.flinkdevices.cli.flink;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Calls into a driver or factory under a time limit, so that one that hangs is reported instead of
 * waited on forever (a TaskManager would wait forever).
 */
public final class TimedCall {

    /** How long a call that ran out of time gets to clean up after it was interrupted. */
    static final Duration CANCEL_GRACE = Duration.ofSeconds(5);

    private final Duration timeout;

    /**
     * @param timeout how long one call may take
     */
    public TimedCall(Duration timeout) {
        this.timeout = Objects.requireNonNull(timeout);
    }

    /** The time limit of one call. */
    public Duration timeout() {
        return timeout;
    }

    /**
     * Runs {@code call} on a daemon thread named {@code threadName} and returns its result.
     *
     * @throws TimeoutException when it did not return in time (the thread is interrupted and
     *     waited for up to {@link #CANCEL_GRACE}, so that it ends the processes it started)
     * @throws Throwable whatever {@code call} threw, unwrapped, {@code Error}s included
     */
    public <T> T call(String threadName, Callable<T> call) throws Throwable {
        FutureTask<T> task = new FutureTask<>(call);
        // a daemon thread: a driver that never returns must not keep the CLI alive
        Thread thread = new Thread(task, threadName);
        thread.setDaemon(true);
        thread.start();
        try {
            return task.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause();
        } catch (TimeoutException e) {
            // Interrupt the driver and give it a moment to end what it started: the SDK's
            // ExternalCommand kills a tool's whole process tree when interrupted. Returning at
            // once would let the CLI exit while a hung tool's children live on.
            task.cancel(true);
            thread.join(CANCEL_GRACE.toMillis());
            throw e;
        }
    }

    /** The limit as an operator reads it: {@code 60 s} or {@code 500 ms}. */
    public String describeTimeout() {
        return timeout.toMillis() % 1000 == 0
                ? timeout.toSeconds() + " s"
                : timeout.toMillis() + " ms";
    }

    /**
     * {@link Failures#describe} plus, for an {@code Error}, that Flink would not catch it and the
     * TaskManager would not start.
     */
    public static String describeFailure(Throwable failure) {
        String line = Failures.describe(failure);
        if (Failures.escapesFlink(failure)) {
            line +=
                    " (an Error, which Flink does not catch: the TaskManager would fail to start;"
                            + " the driver should turn it into an exception)";
        }
        return line;
    }
}
