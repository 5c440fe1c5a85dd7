package io.flinkdevices.testkit.cluster;

import io.flinkdevices.testkit.cluster.internal.SharedRpcSystemLoader;
import io.flinkdevices.testkit.simulated.SimulatedDevices;

import org.apache.flink.annotation.Experimental;
import org.apache.flink.configuration.ClusterOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.ExternalResourceOptions;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.SecurityOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.core.plugin.DefaultPluginManager;
import org.apache.flink.core.plugin.DirectoryBasedPluginFinder;
import org.apache.flink.core.plugin.PluginManager;
import org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint;
import org.apache.flink.runtime.taskexecutor.TaskExecutorResourceUtils;
import org.apache.flink.runtime.taskexecutor.TaskManagerRunner;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A real Flink cluster in this JVM whose TaskManagers load external-resource drivers from a
 * plugins folder, so that tasks' {@code getRuntimeContext().getExternalResourceInfos(name)}
 * returns what the drivers found.
 *
 * <p>Flink's {@code MiniCluster} hands every task an empty external-resource provider. This
 * cluster instead starts the JobManager through Flink's {@link StandaloneSessionClusterEntrypoint}
 * and every TaskManager through {@link TaskManagerRunner}, each with its own {@link
 * DefaultPluginManager} over the plugins folder: the path a TaskManager process takes, plugin
 * class loaders and Flink's {@code ExternalResourceUtils} included. Jobs run through {@link
 * #createEnvironment()}, a remote environment on the cluster's REST port; job classes come from
 * this JVM's class path, so no job jar is needed.
 *
 * <pre>{@code
 * try (LocalDeviceCluster cluster =
 *         LocalDeviceCluster.builder()
 *                 .simulatedGpus("gpu", 2, Map.of("count", "4"))
 *                 .slotsPerTaskManager(2)
 *                 .build()
 *                 .start()) {
 *     StreamExecutionEnvironment env = cluster.createEnvironment();
 *     ...
 * }
 * }</pre>
 *
 * <p>Everything binds to {@code localhost} on free ports and writes below one working folder,
 * which {@link #close()} deletes when the cluster created it. {@link #close()} stops every
 * TaskManager and the JobManager with their thread pools and ports, also after a failed {@link
 * #start()}. Flink settings that are global to the JVM (file systems, security context) are set
 * as a TaskManager process would set them; the cluster turns Flink's security modules off so that
 * it leaves no JAAS system properties behind. All components share one Pekko RPC system per JVM,
 * as in Flink's MiniCluster, because Flink's per-process RPC class loader cannot be closed safely
 * in a JVM that keeps running; set {@code flink-devices.testkit.shared-rpc-system: false} to get
 * one per component.
 *
 * <p>Not thread-safe: start, stop and close it from one thread.
 */
@Experimental
public final class LocalDeviceCluster implements AutoCloseable {

    /** How long start, stop and close wait for Flink before giving up. */
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private static final String HOST = "localhost";

    private static final Pattern TASK_MANAGERS = Pattern.compile("\"taskmanagers\"\\s*:\\s*(\\d+)");

    private final Configuration baseConfig;
    private final Path configuredPluginsDir;
    private final List<PluginInstaller> installers;
    private final Path configuredWorkingDir;
    private final int initialTaskManagers;

    private Path workingDir;
    private boolean deleteWorkingDir;
    private Path pluginsDir;
    private StandaloneSessionClusterEntrypoint jobManager;
    private int restPort = -1;
    private int rpcPort = -1;
    private final List<TaskManagerRunner> taskManagers = new ArrayList<>();
    private State state = State.CREATED;

    private enum State {
        CREATED,
        RUNNING,
        CLOSED
    }

    private LocalDeviceCluster(Builder b) {
        this.baseConfig = b.toConfiguration();
        this.configuredPluginsDir = b.pluginsDir;
        this.installers = List.copyOf(b.installers);
        this.configuredWorkingDir = b.workingDir;
        this.initialTaskManagers = b.taskManagers;
    }

    /** Starts describing a cluster: one TaskManager with one slot and no resources by default. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Writes a plugin into the cluster's plugins folder before the TaskManagers start, for
     * example {@code SimulatedDevices::installGpuPlugin}.
     */
    @Experimental
    @FunctionalInterface
    public interface PluginInstaller {
        /** Writes one or more plugin folders below {@code pluginsRoot}. */
        void install(Path pluginsRoot) throws IOException;
    }

    /**
     * The Flink releases this cluster runs on, each tested (module {@code compat} runs the shipped
     * plugins through it on each older release; everything else runs on the newest). It starts
     * Flink's JobManager and TaskManagers through their internal entry points, so other releases
     * are refused at {@link #start()}.
     */
    public static final List<String> TESTED_FLINK_RELEASES = List.of("1.20", "2.0", "2.1", "2.2", "2.3");

    /**
     * Refuses a Flink release this cluster was not tested on, naming it and the tested ones. An
     * unknown version (a class path without Flink's version file) is let through.
     *
     * @throws IllegalStateException for a release outside {@link #TESTED_FLINK_RELEASES}
     */
    static void checkFlinkRelease(String version) {
        Matcher m = Pattern.compile("(\\d+\\.\\d+)(\\..*)?").matcher(String.valueOf(version));
        if (m.matches() && !TESTED_FLINK_RELEASES.contains(m.group(1))) {
            throw new IllegalStateException(
                    "LocalDeviceCluster runs on Flink "
                            + String.join(", ", TESTED_FLINK_RELEASES)
                            + " (it starts Flink through internal entry points: TaskManagerRunner,"
                            + " StandaloneSessionClusterEntrypoint, the RPC system loader), but the class path holds Flink "
                            + version
                            + "; test with a listed release, or check the plugin jar alone with PluginCheck");
        }
    }

    /**
     * Starts the JobManager and the configured TaskManagers and waits until every TaskManager has
     * registered, so that a job submitted next finds its slots.
     *
     * @return this cluster
     * @throws IllegalStateException when the cluster was already started or closed
     * @throws Exception when Flink fails to start; everything started so far is stopped again
     */
    public LocalDeviceCluster start() throws Exception {
        if (state != State.CREATED) {
            throw new IllegalStateException("the cluster can be started once, but it is " + state);
        }
        checkFlinkRelease(EnvironmentInformation.getVersion());
        state = State.RUNNING;
        try {
            prepareFolders();
            startJobManager();
            for (int i = 0; i < initialTaskManagers; i++) {
                startTaskManagerRunner(Map.of());
            }
            awaitRegisteredTaskManagers(initialTaskManagers);
        } catch (Throwable t) {
            try {
                close();
            } catch (RuntimeException e) {
                t.addSuppressed(e);
            }
            throw t;
        }
        return this;
    }

    /**
     * A remote environment that submits jobs to this cluster. Job classes are taken from this
     * JVM's class path, which the TaskManagers' user-code class loaders fall back to.
     */
    public StreamExecutionEnvironment createEnvironment() {
        requireRunning();
        return StreamExecutionEnvironment.createRemoteEnvironment(HOST, restPort);
    }

    /**
     * Starts one more TaskManager with the cluster's configuration and waits until it has
     * registered.
     *
     * @return its index, for {@link #stopTaskManager(int)}
     */
    public int startTaskManager() throws Exception {
        return startTaskManager(Map.of());
    }

    /**
     * Starts one more TaskManager whose configuration is the cluster's plus {@code overrides},
     * for example a different {@code external-resource.gpu.param.count} to simulate a host with
     * fewer GPUs, and waits until it has registered.
     *
     * @return its index, for {@link #stopTaskManager(int)}
     */
    public int startTaskManager(Map<String, String> overrides) throws Exception {
        requireRunning();
        int index = startTaskManagerRunner(overrides);
        awaitRegisteredTaskManagers(runningTaskManagers());
        return index;
    }

    /**
     * Stops the TaskManager with this index (in start order, from 0) and waits until the
     * JobManager no longer counts it. Stopping a stopped TaskManager does nothing.
     *
     * @throws IndexOutOfBoundsException when no TaskManager has that index
     */
    public void stopTaskManager(int index) throws Exception {
        requireRunning();
        Objects.checkIndex(index, taskManagers.size());
        TaskManagerRunner runner = taskManagers.get(index);
        if (runner == null) {
            return;
        }
        taskManagers.set(index, null);
        await(runner.closeAsync());
        awaitRegisteredTaskManagers(runningTaskManagers());
    }

    /** How many TaskManagers run now. */
    public int runningTaskManagers() {
        return (int) taskManagers.stream().filter(Objects::nonNull).count();
    }

    /** The JobManager's REST port, for clients and the CLI. */
    public int restPort() {
        requireRunning();
        return restPort;
    }

    /** The JobManager's RPC port. */
    public int rpcPort() {
        requireRunning();
        return rpcPort;
    }

    /** The plugins folder the TaskManagers load drivers from. */
    public Path pluginsDir() {
        requireRunning();
        return pluginsDir;
    }

    /** A copy of the configuration every TaskManager starts from (before local adjustments). */
    public Configuration configuration() {
        Configuration copy = new Configuration(baseConfig);
        if (state == State.RUNNING && rpcPort >= 0) {
            copy.set(JobManagerOptions.PORT, rpcPort);
            copy.set(RestOptions.PORT, restPort);
        }
        return copy;
    }

    /**
     * Stops every TaskManager, then the JobManager, and deletes the working folder when the
     * cluster created it. Safe to call more than once and after a failed {@link #start()}. An
     * interrupt does not cut the clean-up short; the thread's interrupt flag is set again at the
     * end.
     *
     * @throws IllegalStateException when some part did not stop cleanly, after everything was
     *     tried; the failures are its cause and suppressed exceptions
     */
    @Override
    public void close() {
        if (state == State.CLOSED) {
            return;
        }
        state = State.CLOSED;
        boolean interrupted = Thread.interrupted();
        Exception failure = null;
        for (int i = 0; i < taskManagers.size(); i++) {
            TaskManagerRunner runner = taskManagers.get(i);
            if (runner == null) {
                continue;
            }
            taskManagers.set(i, null);
            try {
                await(runner.closeAsync());
            } catch (InterruptedException e) {
                interrupted = true;
                failure = firstOrSuppressed(e, failure);
            } catch (Exception e) {
                failure = firstOrSuppressed(e, failure);
            }
        }
        if (jobManager != null) {
            try {
                await(jobManager.closeAsync());
            } catch (InterruptedException e) {
                interrupted = true;
                failure = firstOrSuppressed(e, failure);
            } catch (Exception e) {
                failure = firstOrSuppressed(e, failure);
            }
            jobManager = null;
        }
        if (deleteWorkingDir && workingDir != null) {
            try {
                deleteRecursively(workingDir);
            } catch (IOException e) {
                failure = firstOrSuppressed(e, failure);
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (failure != null) {
            IllegalStateException e =
                    new IllegalStateException(
                            "the local device cluster did not stop cleanly: " + failure, failure);
            for (Throwable s : failure.getSuppressed()) {
                e.addSuppressed(s);
            }
            throw e;
        }
    }

    /** Waits for a Flink shutdown future; an interrupt ends the wait but not the clean-up. */
    private static void await(CompletableFuture<?> future)
            throws Exception {
        try {
            future.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            // clear the flag so that the next component can still be awaited
            Thread.interrupted();
            throw e;
        }
    }

    @Override
    public String toString() {
        return "LocalDeviceCluster{state="
                + state
                + (state == State.RUNNING
                        ? ", restPort=" + restPort + ", taskManagers=" + runningTaskManagers()
                        : "")
                + ", plugins="
                + (pluginsDir != null ? pluginsDir : configuredPluginsDir)
                + "}";
    }

    // ------------------------------------------------------------------------------------------

    private void prepareFolders() throws IOException {
        if (configuredWorkingDir != null) {
            workingDir = Files.createDirectories(configuredWorkingDir);
        } else {
            workingDir = Files.createTempDirectory("flink-devices-cluster-");
            deleteWorkingDir = true;
        }
        pluginsDir =
                configuredPluginsDir != null
                        ? configuredPluginsDir.toAbsolutePath()
                        : workingDir.resolve("plugins");
        Files.createDirectories(pluginsDir);
        for (PluginInstaller installer : installers) {
            installer.install(pluginsDir);
        }
        Files.createDirectories(workingDir.resolve("tmp"));
    }

    private Configuration processConfig() {
        Configuration c = new Configuration();
        c.set(CoreOptions.TMP_DIRS, workingDir.resolve("tmp").toString());
        c.set(WebOptions.TMP_DIR, workingDir.resolve("tmp").toString());
        c.set(ClusterOptions.PROCESS_WORKING_DIR_BASE, workingDir.resolve("process").toString());
        c.addAll(baseConfig);
        return c;
    }

    private void startJobManager() throws Exception {
        Configuration config = processConfig();
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        jobManager = new StandaloneSessionClusterEntrypoint(config);
        try {
            jobManager.startCluster();
        } finally {
            // the entrypoint installs a JVM-wide handler as a JobManager process would; this JVM
            // is not a JobManager process
            Thread.setDefaultUncaughtExceptionHandler(previous);
        }
        restPort = jobManager.getRestPort();
        rpcPort = jobManager.getRpcPort();
    }

    private int startTaskManagerRunner(Map<String, String> overrides) throws Exception {
        Configuration config = processConfig();
        overrides.forEach(config::setString);
        config.set(JobManagerOptions.ADDRESS, HOST);
        config.set(JobManagerOptions.PORT, rpcPort);
        TaskExecutorResourceUtils.adjustForLocalExecution(config);
        PluginManager pluginManager =
                new DefaultPluginManager(
                        new DirectoryBasedPluginFinder(pluginsDir).findPlugins(),
                        CoreOptions.getPluginParentFirstLoaderPatterns(config));
        TaskManagerRunner runner =
                new TaskManagerRunner(
                        config, pluginManager, TaskManagerRunner::createTaskExecutorService);
        // added before start so that close() stops a half-started runner too
        taskManagers.add(runner);
        runner.start();
        return taskManagers.size() - 1;
    }

    private void awaitRegisteredTaskManagers(int expected) throws Exception {
        URL overview = new URL("http://" + HOST + ":" + restPort + "/overview");
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        int seen = -1;
        String lastError = null;
        while (System.nanoTime() < deadline) {
            HttpURLConnection connection = null;
            try {
                connection = (HttpURLConnection) overview.openConnection();
                connection.setConnectTimeout(5_000);
                connection.setReadTimeout(5_000);
                // no keep-alive: a cached connection would keep a JDK timer thread running
                connection.setRequestProperty("Connection", "close");
                int status = connection.getResponseCode();
                String body;
                try (InputStream in =
                        status == 200 ? connection.getInputStream() : connection.getErrorStream()) {
                    body = in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
                Matcher m = TASK_MANAGERS.matcher(body);
                if (status == 200 && m.find()) {
                    seen = Integer.parseInt(m.group(1));
                    if (seen == expected) {
                        return;
                    }
                } else {
                    lastError = "HTTP " + status + ": " + body;
                }
            } catch (IOException e) {
                lastError = e.toString();
            } finally {
                if (connection != null) {
                    connection.disconnect();
                }
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException(
                "the JobManager on port "
                        + restPort
                        + " counts "
                        + seen
                        + " TaskManagers after "
                        + TIMEOUT.toSeconds()
                        + " s, expected "
                        + expected
                        + (lastError == null ? "" : "; last REST answer: " + lastError));
    }

    private void requireRunning() {
        if (state != State.RUNNING || jobManager == null) {
            throw new IllegalStateException(
                    "the cluster is not running (" + state + "); call start() first");
        }
    }

    private static Exception firstOrSuppressed(Exception next, Exception first) {
        if (first == null) {
            return next;
        }
        first.addSuppressed(next);
        return first;
    }

    private static void deleteRecursively(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toArray(Path[]::new)) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** Describes a {@link LocalDeviceCluster}; every setting is optional. */
    @Experimental
    public static final class Builder {

        private Path pluginsDir;
        private Path workingDir;
        private int taskManagers = 1;
        private int slotsPerTaskManager = 1;
        private final List<PluginInstaller> installers = new ArrayList<>();
        private final Map<String, Map<String, String>> resources = new LinkedHashMap<>();
        private final Map<String, String> settings = new LinkedHashMap<>();

        private Builder() {}

        /**
         * The plugins folder the TaskManagers load drivers from ({@code plugins/<name>/*.jar}).
         * Without it the cluster uses an empty folder of its own.
         */
        public Builder pluginsDir(Path pluginsDir) {
            this.pluginsDir = Objects.requireNonNull(pluginsDir, "pluginsDir");
            return this;
        }

        /**
         * Runs {@code installer} on the plugins folder when the cluster starts, for example
         * {@code SimulatedDevices::installGpuPlugin}.
         */
        public Builder installPlugins(PluginInstaller installer) {
            installers.add(Objects.requireNonNull(installer, "installer"));
            return this;
        }

        /**
         * The folder for the cluster's working directories, temporary files and (without {@link
         * #pluginsDir(Path)}) plugins. Kept after {@link LocalDeviceCluster#close()}; without it
         * the cluster uses a temporary folder and deletes it on close.
         */
        public Builder workingDir(Path workingDir) {
            this.workingDir = Objects.requireNonNull(workingDir, "workingDir");
            return this;
        }

        /** How many TaskManagers {@link LocalDeviceCluster#start()} starts; 1 by default. */
        public Builder taskManagers(int count) {
            if (count < 0) {
                throw new IllegalArgumentException(
                        "taskManagers must be >= 0 but is " + count);
            }
            this.taskManagers = count;
            return this;
        }

        /** Task slots per TaskManager ({@code taskmanager.numberOfTaskSlots}); 1 by default. */
        public Builder slotsPerTaskManager(int slots) {
            if (slots < 1) {
                throw new IllegalArgumentException(
                        "slotsPerTaskManager must be >= 1 but is " + slots);
            }
            this.slotsPerTaskManager = slots;
            return this;
        }

        /**
         * Enables an external resource on every TaskManager: adds {@code name} to {@code
         * external-resources} and sets {@code external-resource.<name>.driver-factory.class},
         * {@code .amount} and one {@code .param.<key>} per entry of {@code params}.
         *
         * @throws IllegalArgumentException when the name is blank, contains {@code ;} or was
         *     given before, or the amount is not positive
         */
        public Builder resource(
                String name, String factoryClassName, long amount, Map<String, String> params) {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(factoryClassName, "factoryClassName");
            Objects.requireNonNull(params, "params");
            if (name.isBlank() || name.contains(";") || name.contains(",") || !name.equals(name.trim())) {
                throw new IllegalArgumentException(
                        "resource name must be a plain name such as 'gpu' but is '" + name + "'");
            }
            if (resources.containsKey(name)) {
                throw new IllegalArgumentException("resource '" + name + "' was already given");
            }
            if (amount < 1) {
                throw new IllegalArgumentException(
                        ExternalResourceOptions.getAmountConfigOptionForResource(name)
                                + " must be positive but is "
                                + amount);
            }
            Map<String, String> keys = new LinkedHashMap<>();
            keys.put(
                    ExternalResourceOptions.getExternalResourceDriverFactoryConfigOptionForResource(
                            name),
                    factoryClassName);
            keys.put(
                    ExternalResourceOptions.getAmountConfigOptionForResource(name),
                    Long.toString(amount));
            String paramPrefix =
                    ExternalResourceOptions.getExternalResourceParamConfigPrefixForResource(name);
            params.forEach((k, v) -> keys.put(paramPrefix + k, v));
            resources.put(name, keys);
            return this;
        }

        /**
         * Installs the simulated GPU plugin and enables it as resource {@code name}: shorthand
         * for {@code installPlugins(SimulatedDevices::installGpuPlugin)} plus {@link
         * #resource(String, String, long, Map)} with the simulated factory.
         */
        public Builder simulatedGpus(String name, long amount, Map<String, String> params) {
            resource(name, SimulatedDevices.GPU_FACTORY_CLASS, amount, params);
            if (!installers.contains(SIMULATED_GPU_INSTALLER)) {
                installers.add(SIMULATED_GPU_INSTALLER);
            }
            return this;
        }

        /**
         * Sets any Flink option, as in {@code config.yaml}; applied last, so it overrides what the
         * cluster would choose (ports, memory sizes, ...).
         */
        public Builder set(String key, String value) {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(value, "value");
            settings.put(key, value);
            return this;
        }

        /** Creates the cluster; {@link LocalDeviceCluster#start()} starts it. */
        public LocalDeviceCluster build() {
            return new LocalDeviceCluster(this);
        }

        private Configuration toConfiguration() {
            Configuration c = new Configuration();
            c.set(JobManagerOptions.ADDRESS, HOST);
            c.set(JobManagerOptions.BIND_HOST, HOST);
            c.set(JobManagerOptions.PORT, 0);
            c.set(RestOptions.ADDRESS, HOST);
            c.set(RestOptions.BIND_ADDRESS, HOST);
            c.set(RestOptions.BIND_PORT, "0");
            c.set(TaskManagerOptions.HOST, HOST);
            c.set(TaskManagerOptions.BIND_HOST, HOST);
            c.set(TaskManagerOptions.RPC_PORT, "0");
            c.set(TaskManagerOptions.NUM_TASK_SLOTS, slotsPerTaskManager);
            // small and explicit: a TaskManager allocates its network memory up front
            c.set(TaskManagerOptions.NETWORK_MEMORY_MIN, MemorySize.parse("16m"));
            c.set(TaskManagerOptions.NETWORK_MEMORY_MAX, MemorySize.parse("16m"));
            c.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse("16m"));
            c.set(ClusterOptions.CLUSTER_IO_EXECUTOR_POOL_SIZE, 2);
            // finished jobs kept in memory; by key, since the option's name changed in Flink 2.3
            // (the older key is its fallback there) and older releases know only the older one
            c.setString("completed-application-store.type", "Memory");
            c.setString("jobstore.type", "Memory");
            // no JAAS/ZooKeeper/Hadoop modules: they would set JVM-wide system properties
            c.set(SecurityOptions.SECURITY_MODULE_FACTORY_CLASSES, Collections.emptyList());
            c.set(
                    SecurityOptions.SECURITY_CONTEXT_FACTORY_CLASSES,
                    List.of("org.apache.flink.runtime.security.contexts.NoOpSecurityContextFactory"));
            c.set(SecurityOptions.DELEGATION_TOKENS_ENABLED, false);
            c.set(SharedRpcSystemLoader.ENABLED, true);
            if (!resources.isEmpty()) {
                c.set(ExternalResourceOptions.EXTERNAL_RESOURCE_LIST, List.copyOf(resources.keySet()));
                resources.values().forEach(keys -> keys.forEach(c::setString));
            }
            settings.forEach(c::setString);
            return c;
        }
    }

    private static final PluginInstaller SIMULATED_GPU_INSTALLER = SimulatedDevices::installGpuPlugin;
}
