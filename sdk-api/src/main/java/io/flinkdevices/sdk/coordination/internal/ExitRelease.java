package io.flinkdevices.sdk.coordination.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Releases this JVM's records when it exits normally, so that a TaskManager that shuts down
 * cleanly hands its devices back at once instead of waiting for the next allocation to find it
 * dead.
 */
public final class ExitRelease {

    private static final Logger LOG = LoggerFactory.getLogger(ExitRelease.class);

    /** Something to release at exit. */
    @FunctionalInterface
    public interface Releasable {
        void releaseAtExit() throws Exception;
    }

    private static final Set<Releasable> REGISTERED = new LinkedHashSet<>();
    private static boolean hookInstalled;

    private ExitRelease() {}

    /** Releases {@code r} at normal JVM exit; registering twice is harmless. */
    public static synchronized void register(Releasable r) {
        REGISTERED.add(r);
        if (!hookInstalled) {
            try {
                Runtime.getRuntime()
                        .addShutdownHook(new Thread(ExitRelease::runAll, "flink-devices-coordination-release"));
                hookInstalled = true;
            } catch (IllegalStateException e) {
                // the JVM is already shutting down; releaseAtExit is the caller's job now
            }
        }
    }

    private static void runAll() {
        List<Releasable> all;
        synchronized (ExitRelease.class) {
            all = new ArrayList<>(REGISTERED);
        }
        for (Releasable r : all) {
            try {
                r.releaseAtExit();
            } catch (Exception | LinkageError e) {
                // Logging may already be shut down; stderr reaches the TaskManager's .out file.
                System.err.println("flink-devices: could not release devices at exit: " + e);
                LOG.debug("Release at exit failed", e);
            }
        }
    }
}
