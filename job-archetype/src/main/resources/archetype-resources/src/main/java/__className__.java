package ${package};

import io.flinkdevices.sdk.info.DeviceSelection;
import io.flinkdevices.sdk.info.GpuInfo;

import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A Flink job whose every subtask takes one of the GPUs its TaskManager received and says which.
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

    /** Picks this subtask's GPU once, at open, and names it for every record. */
    static final class UseGpu extends RichMapFunction<Long, String> {
        private static final long serialVersionUID = 1L;

        private transient GpuInfo gpu;

        @Override
        public void open(OpenContext openContext) {
            // the infos come from the driver's plugin class loader: read them with GpuInfo.from,
            // never with a cast
            Set<ExternalResourceInfo> infos = getRuntimeContext().getExternalResourceInfos(RESOURCE);
            int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            gpu = DeviceSelection.forSubtask(infos, subtask, GpuInfo::from)
                    .orElseThrow(() -> new IllegalStateException(
                            "subtask " + subtask + " received no '" + RESOURCE + "' device: its TaskManager needs"
                                    + " a driver in plugins/ and external-resources: " + RESOURCE
                                    + " with external-resource." + RESOURCE + ".amount and .driver-factory.class"));
        }

        @Override
        public String map(Long record) {
            TaskInfo task = getRuntimeContext().getTaskInfo();
            // work on the GPU goes here: CUDA finds it by gpu.getUuid() or gpu.getPciAddress(), and a
            // process started for it gets gpu.getVisibleDevicesEnv()=gpu.getVisibleDevicesValue()
            return "subtask " + task.getIndexOfThisSubtask() + " of " + task.getNumberOfParallelSubtasks()
                    + " uses GPU " + gpu.getIndex()
                    + " (" + gpu.getName().orElse(gpu.getVendor()) + gpu.getUuid().map(uuid -> ", " + uuid).orElse("") + ")";
        }
    }
}
