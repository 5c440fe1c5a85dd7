package io.flinkdevices.sdk.process;

import io.flinkdevices.sdk.DeviceDriverException;

import java.time.LocalTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The programs whose last run did not die when killed: a tool blocked in the kernel on a device
 * that no longer answers (uninterruptible sleep, state {@code D}) ignores even {@code SIGKILL}, and
 * keeps its pipes and the threads draining them. Such a program is not started again while that
 * process is there, so that a monitor sampling every interval does not pile up stuck processes
 * and threads until the TaskManager runs out of them; it runs again once the process is gone.
 */
final class StuckRuns {

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss");
    private static final Map<String, Stuck> BY_PROGRAM = new ConcurrentHashMap<>();

    private StuckRuns() {}

    private static final class Stuck {
        final ProcessHandle process;
        final String since;

        Stuck(ProcessHandle process) {
            this.process = process;
            this.since = LocalTime.now(ZoneId.systemDefault()).format(TIME);
        }
    }

    /** Records that {@code process}, a run of {@code program}, outlived its kill. */
    static void add(String program, ProcessHandle process) {
        BY_PROGRAM.put(program, new Stuck(process));
    }

    /**
     * Throws when the last run of {@code program} outlived its kill and is still there; forgets it
     * once it is gone.
     */
    static void refuseWhileStuck(String program, String description) throws DeviceDriverException {
        Stuck stuck = BY_PROGRAM.get(program);
        if (stuck == null) {
            return;
        }
        if (!stuck.process.isAlive()) {
            BY_PROGRAM.remove(program, stuck);
            return;
        }
        throw new DeviceDriverException(description + ": " + program + " is not started: its run of " + stuck.since
                + " (pid " + stuck.process.pid() + ") did not die when killed and is still there, stuck in the kernel"
                + " (as a tool is whose device no longer answers); it runs again once that process is gone. Check the"
                + " device and the kernel log (dmesg) of this host");
    }

    /** Forgets every stuck run (tests). */
    static void clear() {
        BY_PROGRAM.clear();
    }
}
