package io.flinkdevices.samples.rdma;

import io.flinkdevices.samples.LocalFiles;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The RDMA sample ({@link EnrichmentJob}) on a local device cluster whose TaskManager loads
 * flink-devices' RDMA driver from {@code plugins/rdma/} (built from the class path) as resource
 * {@code rdma}, shared ports: on this host's {@code /sys/class/infiniband} where it has a port,
 * else on a fake RoCE host. The table server runs at {@code o}'s address (tests and the main job
 * start one).
 */
public final class EnrichmentLocal {

    private EnrichmentLocal() {}

    /** Runs the job with a TaskManager of {@code slots} slots; {@code settings} go into the cluster's configuration. */
    public static EnrichmentJob.Result run(EnrichmentJob.Options o, int slots, Map<String, String> settings) throws Exception {
        Path work = Files.createTempDirectory("flink-devices-enrichment");
        try {
            Map<String, String> params = new LinkedHashMap<>();
            params.put("sharing", "shared");
            if (!hasRdmaPort(Path.of("/sys/class/infiniband"))) {
                FakeFileTree sys =
                        FakeRdmaHost.builder()
                                .roce("mlx5_bond_0", "bond0", "10.1.2.3", 100)
                                .installOn(FakeHost.create(work.resolve("host")));
                params.put("sysfs.root", sys.root().toString());
            }
            Path plugins = work.resolve("plugins");
            RdmaPlugin.install(plugins);
            LocalDeviceCluster.Builder builder =
                    LocalDeviceCluster.builder()
                            .pluginsDir(plugins)
                            .taskManagers(1)
                            .slotsPerTaskManager(slots)
                            .resource("rdma", RdmaPlugin.FACTORY, 1, params);
            settings.forEach(builder::set);
            try (LocalDeviceCluster cluster = builder.build().start()) {
                return EnrichmentJob.execute(cluster.createEnvironment(), o);
            }
        } finally {
            LocalFiles.deleteRecursively(work);
        }
    }

    private static boolean hasRdmaPort(Path infiniband) {
        if (!Files.isDirectory(infiniband)) {
            return false;
        }
        try (var s = Files.list(infiniband)) {
            List<Path> all = s.limit(1).collect(java.util.stream.Collectors.toList());
            return !all.isEmpty();
        } catch (java.io.IOException e) {
            return false;
        }
    }
}
