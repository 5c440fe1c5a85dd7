package io.flinkdevices.sdk.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Waits for a program and kills it with every process it started: the descendants seen while it
 * ran, those it has now, and those that carry the run's marker ({@link MarkedProcesses}). Kills
 * are awaited, so that no killed process is still about to die when a run returns.
 */
final class ProcessTree {

    private static final Duration KILL_GRACE = Duration.ofSeconds(1);
    private static final long FIRST_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long MAX_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private ProcessTree() {}

    /**
     * Waits until {@code process} exits or {@code deadlineNanos} passes, recording its
     * descendants meanwhile: once the program exits, its orphans can no longer be found through
     * it.
     */
    static boolean waitWatchingChildren(Process process, long deadlineNanos, Set<ProcessHandle> seen)
            throws InterruptedException {
        long poll = FIRST_POLL_NANOS;
        while (true) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                return !process.isAlive();
            }
            if (process.waitFor(Math.min(left, poll), TimeUnit.NANOSECONDS)) {
                return true;
            }
            process.descendants().forEach(seen::add);
            poll = Math.min(poll * 2, MAX_POLL_NANOS);
        }
    }

    /**
     * Kills {@code process}, the descendants seen while it ran, those it has now, and (on Linux)
     * every process that carries this run's marker.
     */
    static void killTree(Process process, Set<ProcessHandle> seen, String marker) {
        // Children first, found while the root still runs: once it dies they are re-parented
        // and no longer its descendants, and a shell root could start new ones in between.
        Set<ProcessHandle> victims = new LinkedHashSet<>();
        process.descendants().forEach(victims::add);
        victims.addAll(seen);
        victims.addAll(MarkedProcesses.markedWith(marker, process.pid()));
        killAll(victims);
        process.destroyForcibly();
        boolean interrupted = false;
        try {
            process.waitFor(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            interrupted = true;
        }
        // what the root forked between the snapshot and its death
        Set<ProcessHandle> late = new LinkedHashSet<>();
        for (ProcessHandle h : MarkedProcesses.markedWith(marker, process.pid())) {
            if (!victims.contains(h)) {
                late.add(h);
            }
        }
        killAll(late);
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Kills what an exited program left running: the descendants seen, and marked processes. */
    static void killLeftovers(long rootPid, Set<ProcessHandle> seen, String marker) {
        Set<ProcessHandle> victims = new LinkedHashSet<>();
        for (ProcessHandle h : seen) {
            if (h.isAlive()) {
                victims.add(h);
            }
        }
        victims.addAll(MarkedProcesses.markedWith(marker, rootPid));
        killAll(victims);
    }

    /**
     * Kills {@code victims} and their descendants, the deepest first, so that no victim's death
     * re-parents a child before that child was found.
     */
    private static void killAll(Set<ProcessHandle> victims) {
        Deque<ProcessHandle> queue = new ArrayDeque<>(victims);
        List<ProcessHandle> order = new ArrayList<>();
        while (!queue.isEmpty()) {
            ProcessHandle h = queue.poll();
            order.add(h);
            h.descendants()
                    .forEach(
                            d -> {
                                if (victims.add(d)) {
                                    queue.add(d);
                                }
                            });
        }
        for (int i = order.size() - 1; i >= 0; i--) {
            order.get(i).destroyForcibly();
        }
        awaitGone(order);
    }

    /**
     * Waits, at most {@link #KILL_GRACE}, until every killed process has stopped running: SIGKILL
     * is delivered asynchronously, and a caller that returns (a CLI that exits) must not leave
     * one behind that is still about to die.
     */
    private static void awaitGone(List<ProcessHandle> killed) {
        long deadline = System.nanoTime() + KILL_GRACE.toNanos();
        for (ProcessHandle h : killed) {
            while (running(h) && System.nanoTime() < deadline) {
                Thread.onSpinWait();
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** Whether {@code h} still runs; a zombie (killed, not yet reaped by its parent) does not. */
    private static boolean running(ProcessHandle h) {
        if (!h.isAlive()) {
            return false;
        }
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(h.pid()), "stat"));
            char state = stat.charAt(stat.lastIndexOf(')') + 2);
            return state != 'Z' && state != 'X';
        } catch (IOException | RuntimeException e) {
            return h.isAlive();
        }
    }
}
