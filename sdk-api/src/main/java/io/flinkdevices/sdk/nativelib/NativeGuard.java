package io.flinkdevices.sdk.nativelib;

import io.flinkdevices.sdk.DeviceDriverException;

import org.apache.flink.annotation.PublicEvolving;

import java.util.concurrent.Callable;

/**
 * Runs code that touches a native library so that a {@link LinkageError} never escapes.
 *
 * <p>A missing {@code libcuda.so.1} surfaces as {@link UnsatisfiedLinkError}, a broken class
 * initializer as {@link ExceptionInInitializerError} or {@link NoClassDefFoundError}: all {@code
 * Error}s, which Flink does not catch while starting a TaskManager, so the TaskManager dies. The
 * guard turns them into a {@link DeviceDriverException} that says which library failed and how
 * to install it.
 */
@PublicEvolving
public final class NativeGuard {

    private NativeGuard() {}

    /** Code that may fail with an exception or a linkage error. */
    @FunctionalInterface
    @PublicEvolving
    public interface NativeCall<T> {
        /** Does the native work. */
        T call() throws Exception;
    }

    /**
     * Runs {@code call}, turning a {@link LinkageError} into a {@link DeviceDriverException}.
     *
     * @param library the native library, e.g. {@code libcuda.so.1 (NVIDIA driver)}
     * @param installHint how to get it, e.g. {@code install the NVIDIA driver}
     */
    public static <T> T call(String library, String installHint, NativeCall<T> call)
            throws DeviceDriverException {
        try {
            return call.call();
        } catch (LinkageError e) {
            throw new DeviceDriverException(
                    "native library "
                            + library
                            + " could not be loaded ("
                            + describe(e)
                            + "); "
                            + installHint,
                    e);
        } catch (DeviceDriverException e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DeviceDriverException(library + ": interrupted", e);
        } catch (Exception e) {
            throw new DeviceDriverException(library + ": " + describe(e), e);
        }
    }

    /**
     * The class and message of {@code t} and of its causes: an {@link ExceptionInInitializerError}
     * has no message of its own, the reason is in its cause.
     */
    private static String describe(Throwable t) {
        StringBuilder sb = new StringBuilder();
        Throwable current = t;
        for (int depth = 0; current != null && depth < 4; depth++) {
            if (depth > 0) {
                sb.append(", caused by ");
            }
            sb.append(current.getClass().getSimpleName());
            if (current.getMessage() != null) {
                sb.append(": ").append(current.getMessage());
            }
            if (current.getCause() == current) {
                break;
            }
            current = current.getCause();
        }
        return sb.toString();
    }

    /** Like {@link #call(String, String, NativeCall)} for a {@link Callable}. */
    public static <T> T callable(String library, String installHint, Callable<T> call)
            throws DeviceDriverException {
        return call(library, installHint, call::call);
    }
}
