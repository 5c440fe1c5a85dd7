package io.flinkdevices.testkit.cluster.internal;

import io.flinkdevices.testkit.internal.MonitorThreads;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint;
import org.apache.flink.runtime.taskexecutor.TaskManagerRunner;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The running parts of a local device cluster: one JobManager and the TaskManagers in start
 * order (a stopped one leaves its index empty, so indexes stay stable). Not thread-safe.
 */
public final class ClusterComponents {

    private final String host;
    private final Duration timeout;
    private StandaloneSessionClusterEntrypoint jobManager;
    private int restPort = -1;
    private int rpcPort = -1;
    private final List<TaskManagerRunner> taskManagers = new ArrayList<>();
    /** Per TaskManager index, the device monitor threads its drivers started. */
    private final List<Set<Thread>> monitors = new ArrayList<>();

    /**
     * @param host the host name every component binds to
     * @param timeout how long a stop or a registration is waited for
     */
    public ClusterComponents(String host, Duration timeout) {
        this.host = host;
        this.timeout = timeout;
    }

    /** Starts the JobManager and learns its ports. */
    public void startJobManager(Configuration config) throws Exception {
        jobManager = ClusterProcesses.startJobManager(config);
        restPort = jobManager.getRestPort();
        rpcPort = jobManager.getRpcPort();
    }

    /** Whether the JobManager was started and not closed. */
    public boolean jobManagerStarted() {
        return jobManager != null;
    }

    /** Starts one more TaskManager, without waiting for it to register; its index. */
    public int startTaskManager(Configuration config, Map<String, String> overrides, Path pluginsDir)
            throws Exception {
        Set<Thread> before = MonitorThreads.running();
        Set<Thread> started = new HashSet<>();
        // added before start so that close() stops a half-started runner and its monitors too
        taskManagers.add(null);
        monitors.add(started);
        int index = taskManagers.size() - 1;
        try {
            TaskManagerRunner runner = ClusterProcesses.newTaskManager(config, overrides, host, rpcPort, pluginsDir);
            taskManagers.set(index, runner);
            runner.start();
        } finally {
            started.addAll(MonitorThreads.startedSince(before));
        }
        return index;
    }

    /**
     * Stops the TaskManager with this index; whether it was running.
     *
     * @throws IndexOutOfBoundsException when no TaskManager has that index
     */
    public boolean stopTaskManager(int index) throws Exception {
        Objects.checkIndex(index, taskManagers.size());
        TaskManagerRunner runner = taskManagers.get(index);
        if (runner == null) {
            return false;
        }
        taskManagers.set(index, null);
        try {
            Shutdown.await(runner.closeAsync(), timeout);
        } finally {
            stopMonitors(index);
        }
        return true;
    }

    /** Waits until the JobManager counts as many TaskManagers as run now. */
    public void awaitRegistered() throws Exception {
        awaitRegistered(running());
    }

    /** Waits until the JobManager counts {@code expected} TaskManagers. */
    public void awaitRegistered(int expected) throws Exception {
        RegisteredTaskManagers.await(host, restPort, expected, timeout);
    }

    /** How many TaskManagers run now. */
    public int running() {
        return (int) taskManagers.stream().filter(Objects::nonNull).count();
    }

    /** The JobManager's REST port; -1 before it started. */
    public int restPort() {
        return restPort;
    }

    /** The JobManager's RPC port; -1 before it started. */
    public int rpcPort() {
        return rpcPort;
    }

    /**
     * Stops the device monitors the TaskManager with this index started, as its process's end
     * would: they share this JVM and would otherwise keep running the host's tools.
     */
    private void stopMonitors(int index) throws InterruptedException {
        Set<Thread> threads = monitors.get(index);
        List<String> alive = MonitorThreads.stop(threads, timeout);
        threads.clear();
        if (!alive.isEmpty()) {
            throw new IllegalStateException("device monitors of TaskManager " + index + " did not stop within "
                    + timeout.toMillis() + " ms: " + alive);
        }
    }

    /** Stops every TaskManager and the device monitors its drivers started, then the JobManager, through {@code shutdown}. */
    public void close(Shutdown shutdown) {
        for (int i = 0; i < taskManagers.size(); i++) {
            TaskManagerRunner runner = taskManagers.get(i);
            if (runner != null) {
                taskManagers.set(i, null);
                shutdown.close(runner::closeAsync);
            }
            int index = i;
            shutdown.run(() -> stopMonitors(index));
        }
        if (jobManager != null) {
            shutdown.close(jobManager::closeAsync);
            jobManager = null;
        }
    }
}
