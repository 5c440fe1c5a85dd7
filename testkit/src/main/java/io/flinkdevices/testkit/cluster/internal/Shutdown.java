package io.flinkdevices.testkit.cluster.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * Stops the parts of a cluster one after the other, trying every part whatever failed before: an
 * interrupt does not cut the clean-up short (the thread's interrupt flag is set again at the end),
 * and every failure is kept, the first as the cause, the others suppressed.
 */
public final class Shutdown {

    private final Duration timeout;
    private boolean interrupted = Thread.interrupted();
    private Exception failure;

    /** Starts a shutdown; each part is awaited at most {@code timeout}. */
    public Shutdown(Duration timeout) {
        this.timeout = timeout;
    }

    /** Closes one part and waits for it. */
    public void close(Supplier<? extends CompletableFuture<?>> part) {
        try {
            await(part.get(), timeout);
        } catch (InterruptedException e) {
            interrupted = true;
            failed(e);
        } catch (Exception e) {
            failed(e);
        }
    }

    /** One step of a shutdown that may throw. */
    @FunctionalInterface
    public interface Step {
        /** Runs the step. */
        void run() throws Exception;
    }

    /** Runs one step, keeping its failure. */
    public void run(Step step) {
        try {
            step.run();
        } catch (InterruptedException e) {
            interrupted = true;
            failed(e);
        } catch (Exception e) {
            failed(e);
        }
    }

    /** Deletes a folder with everything in it. */
    public void delete(Path root) {
        try {
            deleteRecursively(root);
        } catch (IOException e) {
            failed(e);
        }
    }

    /**
     * Sets the interrupt flag again if an interrupt came, and reports the failures.
     *
     * @throws IllegalStateException when some part did not stop cleanly: {@code what} and the
     *     first failure, which is its cause; the others are suppressed
     */
    public void finish(String what) {
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (failure != null) {
            IllegalStateException e = new IllegalStateException(what + ": " + failure, failure);
            for (Throwable s : failure.getSuppressed()) {
                e.addSuppressed(s);
            }
            throw e;
        }
    }

    private void failed(Exception next) {
        if (failure == null) {
            failure = next;
        } else {
            failure.addSuppressed(next);
        }
    }

    /** Waits for a Flink shutdown future; an interrupt ends the wait but not the clean-up. */
    public static void await(CompletableFuture<?> future, Duration timeout) throws Exception {
        try {
            future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            // clear the flag so that the next component can still be awaited
            Thread.interrupted();
            throw e;
        }
    }

    private static void deleteRecursively(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toArray(Path[]::new)) {
                Files.deleteIfExists(p);
            }
        }
    }
}
