package io.flinkdevices.testkit.contract.internal;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/** Bounded polling for the kit's cases that wait for a monitor: never an unbounded wait. */
public final class Waiting {

    private static final long STEP_MILLIS = 50;

    private Waiting() {}

    /** Polls {@code condition} every 50 ms until it holds (true) or {@code bound} has passed (false). */
    public static boolean until(Duration bound, BooleanSupplier condition) {
        long deadline = System.nanoTime() + bound.toNanos();
        while (true) {
            if (condition.getAsBoolean()) {
                return true;
            }
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            pause(Duration.ofMillis(STEP_MILLIS));
        }
    }

    /** Sleeps {@code d}; an interrupt ends it early and stays set. */
    public static void pause(Duration d) {
        try {
            TimeUnit.NANOSECONDS.sleep(d.toNanos());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The process ids of this JVM's live descendants. */
    public static Set<Long> children() {
        return ProcessHandle.current().descendants().filter(ProcessHandle::isAlive).map(ProcessHandle::pid).collect(Collectors.toSet());
    }
}
