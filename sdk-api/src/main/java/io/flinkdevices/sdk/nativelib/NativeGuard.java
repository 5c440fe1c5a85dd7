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
                sb.append(": ").append(oneLine(current.getMessage()));
            }
            if (current.getCause() == current) {
                break;
            }
            current = current.getCause();
        }
        return sb.toString();
    }

    /**
     * A message on one line. Some bindings (JCuda, for one) put a banner (operating system,
     * architecture) and whole stack traces into an {@link UnsatisfiedLinkError}'s message; what the
     * operator needs is its first line and the dynamic linker's reason ({@code libcuda.so.1: cannot
     * open shared object file: No such file or directory}), not the banner or the frames. A
     * one-line message comes back as it is.
     */
    public static String oneLine(String message) {
        String[] lines = message.split("\\R");
        if (lines.length == 1) {
            return message;
        }
        StringBuilder sb = new StringBuilder(lines[0].strip());
        java.util.Set<String> reasons = new java.util.LinkedHashSet<>();
        for (int i = 1; i < lines.length; i++) {
            String line = lines[i].strip();
            if (!line.startsWith("at ") && LINKER_REASON.matcher(line).find()) {
                reasons.add(line.replaceFirst("^java\\.lang\\.UnsatisfiedLinkError: ", ""));
            }
        }
        for (String reason : reasons) {
            sb.append("; ").append(reason);
        }
        return sb.toString();
    }

    private static final java.util.regex.Pattern LINKER_REASON =
            java.util.regex.Pattern.compile(
                    "cannot open shared object file|undefined symbol|wrong ELF class|version `[^']*' not found"
                            + "|cannot allocate memory in static TLS|invalid ELF header");

    /** Like {@link #call(String, String, NativeCall)} for a {@link Callable}. */
    public static <T> T callable(String library, String installHint, Callable<T> call)
            throws DeviceDriverException {
        return call(library, installHint, call::call);
    }
}
