package io.flinkdevices.testkit.cluster;

import org.apache.flink.annotation.Experimental;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;

import java.util.Map;
import java.util.TreeMap;

/**
 * Runs a small job whose subtasks report what {@code getRuntimeContext().getExternalResourceInfos(
 * resourceName)} gave them, as job code sees it: the question every driver test asks of a {@link
 * LocalDeviceCluster}.
 *
 * <pre>{@code
 * Map<Integer, SubtaskResources> seen = ResourceProbe.run(cluster.createEnvironment(), "gpu", 2);
 * assertThat(seen.get(0).values(GpuInfo.KEY_UUID)).containsExactly("GPU-0", "GPU-1");
 * assertThat(seen.get(0).createdByAnotherClassLoader()).isTrue();
 * }</pre>
 */
@Experimental
public final class ResourceProbe {

    private ResourceProbe() {}

    /**
     * Runs a job of {@code parallelism} probes, fed round-robin so that every subtask runs, and
     * returns what each subtask received, keyed by subtask index.
     *
     * @throws Exception when the job fails
     */
    public static Map<Integer, SubtaskResources> run(
            StreamExecutionEnvironment env, String resourceName, int parallelism) throws Exception {
        if (parallelism < 1) {
            throw new IllegalArgumentException("parallelism must be at least 1 but is " + parallelism);
        }
        Map<Integer, SubtaskResources> bySubtask = new TreeMap<>();
        try (CloseableIterator<SubtaskResources> it =
                env.fromSequence(1, 4L * parallelism)
                        .setParallelism(1)
                        .rebalance()
                        .map(new Probe(resourceName))
                        .returns(TypeInformation.of(SubtaskResources.class))
                        .setParallelism(parallelism)
                        .executeAndCollect()) {
            it.forEachRemaining(seen -> bySubtask.putIfAbsent(seen.subtaskIndex(), seen));
        }
        return bySubtask;
    }

    /** The job step: copies what its subtask received. */
    private static final class Probe extends RichMapFunction<Long, SubtaskResources> {
        private static final long serialVersionUID = 1L;
        private final String resourceName;

        Probe(String resourceName) {
            this.resourceName = resourceName;
        }

        @Override
        public SubtaskResources map(Long value) {
            return SubtaskResources.of(
                    getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(),
                    getRuntimeContext().getExternalResourceInfos(resourceName),
                    Probe.class.getClassLoader());
        }
    }
}
