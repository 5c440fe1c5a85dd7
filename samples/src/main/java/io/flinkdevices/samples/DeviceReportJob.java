package io.flinkdevices.samples;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;

import java.util.Map;
import java.util.TreeMap;

/**
 * "Which devices did my tasks get?", submitted with {@code flink run}: one subtask per slot asked
 * for reads {@code getExternalResourceInfos(resource)} and prints the devices (GPUs, OpenCL devices,
 * RDMA ports, or any other kind) its TaskManager received and the one {@link
 * io.flinkdevices.sdk.info.DeviceSelection} picked for it.
 *
 * <pre>
 * flink run -c io.flinkdevices.samples.DeviceReportJob samples-job.jar [--resource gpu] [--parallelism N]
 * </pre>
 *
 * Exits 0 when every subtask got a device, 1 when one did not (with what to check), 2 on a bad
 * option.
 */
public final class DeviceReportJob {

    static final String USAGE =
            "Usage: flink run -c io.flinkdevices.samples.DeviceReportJob samples-job.jar [options]\n"
                    + "Prints, for every subtask, the devices its TaskManager received and the one it uses.\n"
                    + "  --resource NAME  the external resource (default gpu)\n"
                    + "  --parallelism N  subtasks (default: the cluster's default parallelism)\n"
                    + "  --help           this text\n"
                    + "Exit status: 0 every subtask got a device; 1 one did not; 2 a bad option.\n";

    private DeviceReportJob() {}

    public static void main(String[] args) throws Exception {
        String resource = "gpu";
        int parallelism = -1;
        for (int i = 0; i < args.length; i++) {
            String key = args[i];
            if (key.equals("--help") || key.equals("-h")) {
                System.out.print(USAGE);
                return;
            }
            String value = i + 1 < args.length ? args[++i] : null;
            if (key.equals("--resource") && value != null && value.matches("[A-Za-z0-9_-]+")) {
                resource = value;
            } else if (key.equals("--parallelism") && value != null && value.matches("[1-9][0-9]{0,4}")) {
                parallelism = Integer.parseInt(value);
            } else {
                System.err.println("DeviceReportJob: bad option '" + key + (value == null ? "" : " " + value) + "' (see --help)");
                System.exit(2);
                return;
            }
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        int p = parallelism > 0 ? parallelism : env.getParallelism();
        Map<Integer, DeviceReport.Line> bySubtask = new TreeMap<>();
        // One source subtask and a rebalance: round robin reaches every subtask of the report.
        try (CloseableIterator<DeviceReport.Line> it =
                env.fromSequence(0, 16L * p - 1)
                        .setParallelism(1)
                        .rebalance()
                        .map(new DeviceReport(resource))
                        .setParallelism(p)
                        .executeAndCollect("DeviceReportJob")) {
            it.forEachRemaining(l -> bySubtask.putIfAbsent(l.subtask, l));
        }
        System.out.println("external resource '" + resource + "', " + p + " subtask(s):");
        bySubtask.values().forEach(l -> System.out.println("  " + l));
        boolean all = bySubtask.size() == p && bySubtask.values().stream().allMatch(l -> l.picked != null);
        if (all) {
            System.out.println("Every subtask received a device.");
        } else {
            System.out.println("Some subtasks received no '" + resource + "' device: check external-resources in the"
                    + " TaskManagers' configuration and the driver's 'handing out' line (or Flink's 'Failed to retrieve"
                    + " information of external resource' WARN) in their logs.");
        }
        System.exit(all ? 0 : 1);
    }
}
