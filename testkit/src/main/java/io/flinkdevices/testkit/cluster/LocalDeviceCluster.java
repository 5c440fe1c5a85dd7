package io.flinkdevices.testkit.cluster;

import io.flinkdevices.testkit.cluster.internal.ClusterComponents;
import io.flinkdevices.testkit.cluster.internal.ClusterConfiguration;
import io.flinkdevices.testkit.cluster.internal.ClusterFolders;
import io.flinkdevices.testkit.cluster.internal.FlinkReleases;
import io.flinkdevices.testkit.cluster.internal.Shutdown;
import io.flinkdevices.testkit.simulated.SimulatedDevices;

import org.apache.flink.annotation.Experimental;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.plugin.DefaultPluginManager;
import org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint;
import org.apache.flink.runtime.taskexecutor.TaskManagerRunner;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

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

    private final Configuration baseConfig;
    private final Path configuredPluginsDir;
    private final List<PluginInstaller> installers;
    private final Path configuredWorkingDir;
    private final int initialTaskManagers;

    private ClusterFolders folders;
    private Path pluginsDir;
    private final ClusterComponents components = new ClusterComponents(HOST, TIMEOUT);
    private State state = State.CREATED;

    private enum State { CREATED, RUNNING, CLOSED }

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

    /** Refuses a release outside {@link #TESTED_FLINK_RELEASES}; an unknown one is let through. */
    static void checkFlinkRelease(String version) {
        FlinkReleases.check(version, TESTED_FLINK_RELEASES);
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
            components.startJobManager(processConfig());
            for (int i = 0; i < initialTaskManagers; i++) {
                components.startTaskManager(processConfig(), Map.of(), pluginsDir);
            }
            components.awaitRegistered(initialTaskManagers);
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
        return StreamExecutionEnvironment.createRemoteEnvironment(HOST, components.restPort());
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
        int index = components.startTaskManager(processConfig(), overrides, pluginsDir);
        components.awaitRegistered();
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
        if (components.stopTaskManager(index)) {
            components.awaitRegistered();
        }
    }

    /** How many TaskManagers run now. */
    public int runningTaskManagers() {
        return components.running();
    }

    /** The JobManager's REST port, for clients and the CLI. */
    public int restPort() {
        requireRunning();
        return components.restPort();
    }

    /** The JobManager's RPC port. */
    public int rpcPort() {
        requireRunning();
        return components.rpcPort();
    }

    /** The plugins folder the TaskManagers load drivers from. */
    public Path pluginsDir() {
        requireRunning();
        return pluginsDir;
    }

    /** A copy of the configuration every TaskManager starts from (before local adjustments). */
    public Configuration configuration() {
        boolean started = state == State.RUNNING && components.rpcPort() >= 0;
        return ClusterConfiguration.copy(baseConfig, started ? components.rpcPort() : -1, components.restPort());
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
        Shutdown shutdown = new Shutdown(TIMEOUT);
        components.close(shutdown);
        if (folders != null) {
            folders.deleteIfTemporary(shutdown);
        }
        shutdown.finish("the local device cluster did not stop cleanly");
    }

    @Override
    public String toString() {
        return "LocalDeviceCluster{state="
                + state
                + (state == State.RUNNING
                        ? ", restPort=" + components.restPort() + ", taskManagers=" + runningTaskManagers()
                        : "")
                + ", plugins="
                + (pluginsDir != null ? pluginsDir : configuredPluginsDir)
                + "}";
    }

    private void prepareFolders() throws IOException {
        folders = ClusterFolders.create(configuredWorkingDir);
        pluginsDir = folders.createPluginsDir(configuredPluginsDir);
        for (PluginInstaller installer : installers) {
            installer.install(pluginsDir);
        }
        folders.createTmpDir();
    }

    private Configuration processConfig() {
        return ClusterConfiguration.forProcess(folders.workingDir(), baseConfig);
    }

    private void requireRunning() {
        if (state != State.RUNNING || !components.jobManagerStarted()) {
            throw new IllegalStateException(
                    "the cluster is not running (" + state + "); call start() first");
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
            resources.put(
                    name, ClusterConfiguration.resourceKeys(name, factoryClassName, amount, params, resources.keySet()));
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
            return ClusterConfiguration.base(HOST, slotsPerTaskManager, resources, settings);
        }
    }

    private static final PluginInstaller SIMULATED_GPU_INSTALLER = SimulatedDevices::installGpuPlugin;
}
