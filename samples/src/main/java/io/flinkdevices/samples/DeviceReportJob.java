package io.flinkdevices.samples;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;

import java.util.Map;
import java.util.TreeMap;

/**
 * "Which devices did my tasks get?", submitted with {@code flink run}: every subtask leases a
 * device (or a share of one) of the resource and prints one line: its TaskManager, the resource,
 * the device it leased and how much of it, and the devices (GPUs, OpenCL devices, RDMA ports, or
 * any other kind) its TaskManager received.
 *
 * <pre>
 * flink run -c io.flinkdevices.samples.DeviceReportJob samples-job.jar [--resource gpu] [--parallelism N] [--share S]
 * </pre>
 *
 * Exits 0 when every subtask got a device, 1 when one did not (with what to check), 2 on a bad
 * option.
 */
public final class DeviceReportJob {

    static final String USAGE =
            "Usage: flink run -c io.flinkdevices.samples.DeviceReportJob samples-job.jar [options]\n"
                    + "Prints, for every subtask, the device it leased and the devices its TaskManager received.\n"
                    + "  --resource NAME  the external resource (default gpu)\n"
                    + "  --parallelism N  subtasks (default: the cluster's default parallelism)\n"
                    + "  --share S        how much of one device each subtask leases, 0 < S <= 1 (default 1)\n"
                    + "  --help           this text\n"
                    + "Exit status: 0 every subtask got a device; 1 one did not; 2 a bad option.\n";

    private DeviceReportJob() {}

    public static void main(String[] args) throws Exception {
        String resource = "gpu";
        int parallelism = -1;
        double share = 1.0;
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
            } else if (key.equals("--share") && value != null && value.matches("(1(\\.0*)?|0?\\.[0-9]{1,6})")
                    && Double.parseDouble(value) > 0) {
                share = Double.parseDouble(value);
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
                        .map(new DeviceReport(resource, share))
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
            System.out.println("Some subtasks received no '" + resource + "' device: where their TaskManager received none,"
                    + " check external-resources in the TaskManagers' configuration and the driver's 'handing out' line"
                    + " (or Flink's 'Failed to retrieve information of external resource' WARN) in their logs; where other"
                    + " subtasks held every device, run fewer subtasks per TaskManager or lease shares (--share 0.5).");
        }
        System.exit(all ? 0 : 1);
    }
}
