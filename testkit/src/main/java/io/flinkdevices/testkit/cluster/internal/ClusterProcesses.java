package io.flinkdevices.testkit.cluster.internal;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.core.plugin.DefaultPluginManager;
import org.apache.flink.core.plugin.DirectoryBasedPluginFinder;
import org.apache.flink.core.plugin.PluginManager;
import org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint;
import org.apache.flink.runtime.taskexecutor.TaskExecutorResourceUtils;
import org.apache.flink.runtime.taskexecutor.TaskManagerRunner;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * Starts Flink's own components the way their processes do: the JobManager through {@link
 * StandaloneSessionClusterEntrypoint}, each TaskManager through {@link TaskManagerRunner} with a
 * {@link DefaultPluginManager} of its own over the plugins folder (plugin class loaders and
 * Flink's {@code ExternalResourceUtils} included).
 */
public final class ClusterProcesses {

    private ClusterProcesses() {}

    /** Starts a JobManager, leaving the JVM's default uncaught-exception handler as it was. */
    public static StandaloneSessionClusterEntrypoint startJobManager(Configuration config) throws Exception {
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        StandaloneSessionClusterEntrypoint jobManager = new StandaloneSessionClusterEntrypoint(config);
        try {
            jobManager.startCluster();
        } finally {
            // the entrypoint installs a JVM-wide handler as a JobManager process would; this JVM
            // is not a JobManager process
            Thread.setDefaultUncaughtExceptionHandler(previous);
        }
        return jobManager;
    }

    /**
     * A TaskManager, not started yet, with {@code config} plus {@code overrides}, talking to the
     * JobManager at {@code host:rpcPort} and loading plugins from {@code pluginsDir}.
     */
    public static TaskManagerRunner newTaskManager(
            Configuration config, Map<String, String> overrides, String host, int rpcPort, Path pluginsDir)
            throws Exception {
        overrides.forEach(config::setString);
        config.set(JobManagerOptions.ADDRESS, host);
        config.set(JobManagerOptions.PORT, rpcPort);
        TaskExecutorResourceUtils.adjustForLocalExecution(config);
        PluginManager pluginManager = pluginManager(config, pluginsDir);
        return new TaskManagerRunner(config, pluginManager, TaskManagerRunner::createTaskExecutorService);
    }

    private static PluginManager pluginManager(Configuration config, Path pluginsDir) throws IOException {
        return new DefaultPluginManager(
                new DirectoryBasedPluginFinder(pluginsDir).findPlugins(),
                CoreOptions.getPluginParentFirstLoaderPatterns(config));
    }
}
