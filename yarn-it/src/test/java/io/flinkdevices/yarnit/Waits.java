package io.flinkdevices.yarnit;

import java.time.Duration;

/** Bounded waits: every wait of these tests ends, with a message saying what did not happen. */
final class Waits {

    /** A condition that may throw. */
    @FunctionalInterface
    interface Condition {
        boolean holds() throws Exception;
    }

    private static final long POLL_MILLIS = 100;

    private Waits() {}

    /** Polls {@code condition} until it holds; fails after {@code timeout} naming {@code what}. */
    static void until(String what, Duration timeout, Condition condition) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.holds()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("waited " + timeout.toSeconds() + " s for " + what);
            }
            Thread.sleep(POLL_MILLIS);
        }
    }
}
