package io.flinkdevices.testkit.cluster.internal;

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

import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The Flink configuration of the local device cluster: everything on one host name and free
 * ports, small memory, no security modules that would set JVM-wide properties, and the keys of
 * each enabled external resource.
 */
public final class ClusterConfiguration {

    private ClusterConfiguration() {}

    /** The configuration every component starts from, before the per-process folders. */
    public static Configuration base(
            String host, int slotsPerTaskManager, Map<String, Map<String, String>> resources, Map<String, String> settings) {
        Configuration c = new Configuration();
        c.set(JobManagerOptions.ADDRESS, host);
        c.set(JobManagerOptions.BIND_HOST, host);
        c.set(JobManagerOptions.PORT, 0);
        c.set(RestOptions.ADDRESS, host);
        c.set(RestOptions.BIND_ADDRESS, host);
        c.set(RestOptions.BIND_PORT, "0");
        c.set(TaskManagerOptions.HOST, host);
        c.set(TaskManagerOptions.BIND_HOST, host);
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

    /** A copy of {@code base} with the JobManager's ports, unless {@code rpcPort} is negative. */
    public static Configuration copy(Configuration base, int rpcPort, int restPort) {
        Configuration copy = new Configuration(base);
        if (rpcPort >= 0) {
            copy.set(JobManagerOptions.PORT, rpcPort);
            copy.set(RestOptions.PORT, restPort);
        }
        return copy;
    }

    /** The configuration of one process: its temporary and working folders below {@code workingDir}. */
    public static Configuration forProcess(Path workingDir, Configuration base) {
        Configuration c = new Configuration();
        c.set(CoreOptions.TMP_DIRS, workingDir.resolve("tmp").toString());
        c.set(WebOptions.TMP_DIR, workingDir.resolve("tmp").toString());
        c.set(ClusterOptions.PROCESS_WORKING_DIR_BASE, workingDir.resolve("process").toString());
        c.addAll(base);
        return c;
    }

    private static void checkResourceName(String name) {
        if (name.isBlank() || name.contains(";") || name.contains(",") || !name.equals(name.trim())) {
            throw new IllegalArgumentException(
                    "resource name must be a plain name such as 'gpu' but is '" + name + "'");
        }
    }

    /**
     * The keys that enable resource {@code name}: its driver factory, amount and one {@code
     * .param.<key>} per entry of {@code params}.
     *
     * @param given the names of the resources given before
     * @throws IllegalArgumentException when the name is blank, contains {@code ;} or {@code ,},
     *     has surrounding spaces or was given before, or the amount is not positive
     */
    public static Map<String, String> resourceKeys(
            String name, String factoryClassName, long amount, Map<String, String> params, Set<String> given) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(factoryClassName, "factoryClassName");
        Objects.requireNonNull(params, "params");
        checkResourceName(name);
        if (given.contains(name)) {
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
                ExternalResourceOptions.getExternalResourceDriverFactoryConfigOptionForResource(name),
                factoryClassName);
        keys.put(ExternalResourceOptions.getAmountConfigOptionForResource(name), Long.toString(amount));
        String paramPrefix = ExternalResourceOptions.getExternalResourceParamConfigPrefixForResource(name);
        params.forEach((k, v) -> keys.put(paramPrefix + k, v));
        return keys;
    }
}
