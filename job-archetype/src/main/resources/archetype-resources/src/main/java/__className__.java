package ${package};

import io.flinkdevices.job.DeviceLease;
import io.flinkdevices.job.DeviceLeases;
import io.flinkdevices.sdk.info.GpuInfo;

import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;

import java.util.ArrayList;
import java.util.List;

/**
 * A Flink job whose every subtask leases a GPU of its own from those its TaskManager received and
 * says which.
 *
 * <pre>
 * flink run -p 2 -c ${package}.${className} target/${artifactId}-${version}.jar
 * </pre>
 *
 * <p>The TaskManagers need a flink-devices driver in {@code plugins/} and the resource configured
 * ({@code external-resources: gpu}, {@code external-resource.gpu.amount} and {@code
 * external-resource.gpu.driver-factory.class}). The lines come back to the client, so run it
 * attached (not with {@code flink run -d}).
 */
public final class ${className} {

    /** The resource name: the TaskManagers' {@code external-resources} entry. */
    static final String RESOURCE = "gpu";

    private ${className}() {}

    public static void main(String[] args) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        // flink run -p N sets the parallelism; without it the cluster's parallelism.default
        for (String line : run(env, Math.max(1, env.getParallelism()))) {
            System.out.println(line);
        }
    }

    /** Runs the job with {@code parallelism} subtasks and returns each subtask's line. */
    public static List<String> run(StreamExecutionEnvironment env, int parallelism) throws Exception {
        List<String> lines = new ArrayList<>();
        // one source hands out one record per subtask, round robin
        try (CloseableIterator<String> it =
                env.fromSequence(1, parallelism)
                        .setParallelism(1)
                        .rebalance()
                        .map(new UseGpu())
                        .setParallelism(parallelism)
                        .executeAndCollect("${className}")) {
            it.forEachRemaining(lines::add);
        }
        return lines;
    }

    /** Leases this subtask's own GPU at open, names it for every record, gives it back at close. */
    static final class UseGpu extends RichMapFunction<Long, String> {
        private static final long serialVersionUID = 1L;

        private transient DeviceLease lease;
        private transient GpuInfo gpu;

        @Override
        public void open(OpenContext openContext) {
            // one whole GPU that no other task of this TaskManager, of this job or another, uses
            // meanwhile; DeviceLeases.acquire(context, RESOURCE, 0.5) would share one with a second task
            lease = DeviceLeases.acquire(getRuntimeContext(), RESOURCE);
            // the infos come from the driver's plugin class loader: read them with GpuInfo.from,
            // never with a cast
            gpu = lease.first(GpuInfo::from);
        }

        @Override
        public String map(Long record) {
            TaskInfo task = getRuntimeContext().getTaskInfo();
            // work on the GPU goes here: CUDA finds it by gpu.getUuid() or gpu.getPciAddress(), and a
            // process started for it gets lease.environment() (CUDA_VISIBLE_DEVICES of this GPU only)
            return "subtask " + task.getIndexOfThisSubtask() + " of " + task.getNumberOfParallelSubtasks()
                    + " uses GPU " + gpu.getIndex()
                    + " (" + gpu.getName().orElse(gpu.getVendor()) + gpu.getUuid().map(uuid -> ", " + uuid).orElse("") + ")";
        }

        @Override
        public void close() {
            if (lease != null) {
                lease.close();
            }
        }
    }
}
