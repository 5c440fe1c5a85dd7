package io.flinkdevices.testkit.contract.internal;

import io.flinkdevices.testkit.fake.FirstSample;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.time.Duration;
import java.util.Collection;
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

    /**
     * Waits until every info a monitor watches (it has {@code health.device}) reads {@code health}:
     * a monitor takes its first sample on its own thread after hand-out. True when they all do
     * within {@code bound}; infos without a monitor are not waited for.
     */
    public static boolean firstSamples(Collection<? extends ExternalResourceInfo> infos, Duration bound) {
        return until(bound, () -> FirstSample.arrived(infos));
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
