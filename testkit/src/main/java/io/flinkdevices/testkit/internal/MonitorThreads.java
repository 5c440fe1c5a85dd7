package io.flinkdevices.testkit.internal;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The device monitors (sdk-api's {@code DeviceMonitor} threads, named {@value #PREFIX}...) that
 * the drivers of one TaskManager (or of one contract-kit case) started, and their stop.
 *
 * <p>Flink has no close hook for external-resource drivers: in a TaskManager process a monitor
 * ends with the JVM, or once the infos it serves are collected. The TaskManagers of a local
 * cluster share the test's JVM, so without this a monitor would go on sampling (running the fake
 * host's tools, which record their calls in the host's folder) after its TaskManager stopped,
 * while the test deletes that folder. A TaskManager's drivers are created on the thread that
 * starts it, so the monitor threads that appear across its start are its own (clusters in one JVM
 * start their TaskManagers one after the other). The contract kit stops the monitors of the
 * drivers a case created in the same way before it deletes the case's hosts.
 */
public final class MonitorThreads {

    /** The name every device monitor thread starts with. */
    public static final String PREFIX = "flink-devices-monitor-";

    private MonitorThreads() {}

    /** The live device monitor threads of this JVM now. */
    public static Set<Thread> running() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith(PREFIX) && t.isAlive())
                .collect(Collectors.toCollection(HashSet::new));
    }

    /** The monitor threads running now that were not in {@code before}. */
    public static Set<Thread> startedSince(Set<Thread> before) {
        Set<Thread> now = running();
        now.removeAll(before);
        return now;
    }

    /**
     * Interrupts the threads (a monitor ends on an interrupt, killing a tool it runs with its
     * children) and waits for them together at most {@code timeout}; the names of those still
     * alive then.
     */
    public static List<String> stop(Set<Thread> threads, Duration timeout) throws InterruptedException {
        threads.forEach(Thread::interrupt);
        long deadline = System.nanoTime() + timeout.toNanos();
        for (Thread t : threads) {
            long left = deadline - System.nanoTime();
            if (left > 0) {
                TimeUnit.NANOSECONDS.timedJoin(t, left);
            }
        }
        return threads.stream().filter(Thread::isAlive).map(Thread::getName).sorted().collect(Collectors.toList());
    }
}
