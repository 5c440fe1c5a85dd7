package io.flinkdevices.sdk.coordination.internal;

import java.util.concurrent.ScheduledThreadPoolExecutor;

/** One daemon thread that runs timed tasks and forgets cancelled ones at once. */
final class DaemonTimer {

    private DaemonTimer() {}

    static ScheduledThreadPoolExecutor create(String name) {
        ScheduledThreadPoolExecutor timer =
                new ScheduledThreadPoolExecutor(
                        1,
                        r -> {
                            Thread t = new Thread(r, name);
                            t.setDaemon(true);
                            return t;
                        });
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }
}
