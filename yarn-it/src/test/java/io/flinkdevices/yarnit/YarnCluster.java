package io.flinkdevices.yarnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * A real Yarn in this JVM: a {@link MiniYARNCluster} with one ResourceManager (CapacityScheduler)
 * and one NodeManager, which read {@code resource-types.xml}, {@code node-resources.xml} and {@code
 * capacity-scheduler.xml} from a Hadoop configuration directory.
 */
final class YarnCluster implements AutoCloseable {

    private final MiniYARNCluster cluster;
    private final YarnClient client;

    private YarnCluster(MiniYARNCluster cluster, YarnClient client) {
        this.cluster = cluster;
        this.client = client;
    }

    /**
     * Starts a cluster named {@code name} whose daemons read their files from {@code confDir} (a
     * {@link HadoopConfDir}) and waits until its NodeManager has registered, for at most {@code
     * timeout}.
     */
    static YarnCluster start(String name, Path confDir, Duration timeout) throws Exception {
        return start(name, confDir, timeout, conf -> {});
    }

    /** As {@link #start(String, Path, Duration)}, with {@code settings} applied to the daemons' configuration. */
    static YarnCluster start(String name, Path confDir, Duration timeout, Consumer<YarnConfiguration> settings)
            throws Exception {
        YarnConfiguration conf = new YarnConfiguration();
        // copies of this configuration (the NodeManager's, the scheduler's) keep its class loader
        conf.setClassLoader(HadoopConfDir.firstOnClassPath(confDir, YarnCluster.class.getClassLoader()));
        conf.setClass(YarnConfiguration.RM_SCHEDULER, CapacityScheduler.class, ResourceScheduler.class);
        // the node's count caps requests at once, not only 10 s after the ResourceManager started
        conf.setLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, 0);
        // the clients' waits are bounded too: submission, and reconnecting to a ResourceManager that died
        conf.setLong(YarnConfiguration.YARN_CLIENT_APPLICATION_CLIENT_PROTOCOL_POLL_TIMEOUT_MS, timeout.toMillis());
        conf.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_MAX_WAIT_MS, timeout.toMillis());
        conf.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_RETRY_INTERVAL_MS, 500);
        // resource types and a NodeManager's resources are read once per JVM; read these files
        ResourceUtils.resetResourceTypes(conf);
        ResourceUtils.resetNodeResources();
        settings.accept(conf);

        MiniYARNCluster cluster = new MiniYARNCluster(name, 1, 1, 1);
        YarnClient client = null;
        try {
            cluster.init(conf);
            cluster.start();
            client = YarnClient.createYarnClient();
            client.init(cluster.getConfig());
            client.start();
            YarnCluster started = new YarnCluster(cluster, client);
            Waits.until(
                    "the NodeManager of " + name + " to register with the ResourceManager",
                    timeout,
                    () -> !started.runningNodes().isEmpty());
            return started;
        } catch (Exception | Error e) {
            if (client != null) {
                client.stop();
            }
            cluster.stop();
            throw e;
        }
    }

    /** The configuration clients use: the cluster's, with the addresses its daemons bound. */
    Configuration clientConfig() {
        return cluster.getConfig();
    }

    /** A client of the ResourceManager, open until {@link #close()}. */
    YarnClient client() {
        return client;
    }

    /** The NodeManagers the ResourceManager counts as running, with what each offers. */
    List<NodeReport> runningNodes() throws Exception {
        return client.getNodeReports(NodeState.RUNNING);
    }

    @Override
    public void close() {
        client.stop();
        cluster.stop();
    }
}
