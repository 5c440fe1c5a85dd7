package io.flinkdevices.samples;

import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.simulated.SimulatedDevices;
import io.flinkdevices.testkit.simulated.SimulatedGpuDriverFactory;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * The main job: a local Flink cluster loads driver plugins from a {@code plugins/} folder, and a
 * job's tasks print the devices they were given.
 *
 * <p>This build ships no hardware driver yet, so the TaskManager loads the testkit's simulated
 * GPU driver from a plugin folder built on the fly; everything else (plugin class loading,
 * Flink's {@code ExternalResourceUtils}, the TaskManager start path, the tasks' runtime context)
 * is Flink 2.3.0's own.
 */
public final class DevicesJob {

    /** Resource name as in {@code external-resources: gpu}. */
    static final String RESOURCE = "gpu";

    private DevicesJob() {}

    /** Runs the job and prints what every subtask saw. */
    public static void main(String[] args) throws Exception {
        int gpusOnHost = 4;
        int gpusPerTaskManager = 2;
        List<DeviceReport.Line> lines = run(gpusOnHost, gpusPerTaskManager);
        System.out.println();
        System.out.println(
                "flink-devices: simulated host with "
                        + gpusOnHost
                        + " GPUs, one TaskManager configured with external-resource."
                        + RESOURCE
                        + ".amount: "
                        + gpusPerTaskManager);
        for (DeviceReport.Line line : lines) {
            System.out.println("  " + line);
        }
        boolean everySubtaskHasOne = lines.stream().allMatch(l -> l.picked != null);
        System.out.println(
                everySubtaskHasOne
                        ? "Every subtask received a device."
                        : "Some subtasks received no device: see the TaskManager log above.");
        System.exit(everySubtaskHasOne ? 0 : 1);
    }

    /** Starts the cluster, runs the job with one subtask per device, and returns the report. */
    static List<DeviceReport.Line> run(int gpusOnHost, int gpusPerTaskManager) throws Exception {
        Path work = Files.createTempDirectory("flink-devices-job");
        try {
            Path plugins = work.resolve("plugins");
            SimulatedDevices.installGpuPlugin(plugins);
            try (LocalDeviceCluster cluster =
                    LocalDeviceCluster.builder()
                            .pluginsDir(plugins)
                            .taskManagers(1)
                            .slotsPerTaskManager(gpusPerTaskManager)
                            .resource(
                                    RESOURCE,
                                    SimulatedGpuDriverFactory.class.getName(),
                                    gpusPerTaskManager,
                                    Map.of("count", Integer.toString(gpusOnHost)))
                            .build()
                            .start()) {
                StreamExecutionEnvironment env = cluster.createEnvironment();
                env.setParallelism(gpusPerTaskManager);
                // One source subtask and a rebalance: round robin reaches every map subtask.
                List<DeviceReport.Line> all =
                        env.fromSequence(0, 16L * gpusPerTaskManager - 1)
                                .setParallelism(1)
                                .rebalance()
                                .map(new DeviceReport(RESOURCE))
                                .executeAndCollect(16 * gpusPerTaskManager);
                Map<Integer, DeviceReport.Line> bySubtask = new java.util.TreeMap<>();
                for (DeviceReport.Line line : all) {
                    bySubtask.putIfAbsent(line.subtask, line);
                }
                return List.copyOf(bySubtask.values());
            }
        } finally {
            deleteRecursively(work);
        }
    }

    private static void deleteRecursively(Path root) throws java.io.IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (var paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
