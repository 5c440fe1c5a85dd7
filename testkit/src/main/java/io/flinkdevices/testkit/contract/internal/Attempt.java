package io.flinkdevices.testkit.contract.internal;

import org.opentest4j.AssertionFailedError;

import java.util.concurrent.Callable;

/**
 * The outcome of calling driver code: a value or an {@link Exception}. An {@link Error} is never
 * an outcome: it fails the test at once, because Flink does not catch it and the TaskManager
 * would not start.
 */
public final class Attempt<T> {

    private final T value;
    private final Exception failure;

    private Attempt(T value, Exception failure) {
        this.value = value;
        this.failure = failure;
    }

    /** Runs {@code call}; {@code what} names it in the failure message of an escaping Error. */
    public static <T> Attempt<T> of(String what, Callable<T> call) {
        try {
            return new Attempt<>(call.call(), null);
        } catch (Exception e) {
            return new Attempt<>(null, e);
        } catch (Error e) {
            throw new AssertionFailedError(
                    what
                            + " threw "
                            + e
                            + ". Flink's ExternalResourceUtils catches only Exceptions: this Error"
                            + " would stop the TaskManager. Turn it into an Exception (for native"
                            + " libraries: NativeGuard).",
                    e);
        }
    }

    /** Whether the call returned. */
    public boolean succeeded() {
        return failure == null;
    }

    /** What the call returned; fails the test with the exception when it threw. */
    public T value(String what) {
        if (failure != null) {
            throw new AssertionFailedError(what + " failed: " + failure, failure);
        }
        return value;
    }

    /** The exception the call threw, or null. */
    public Exception failure() {
        return failure;
    }
}
