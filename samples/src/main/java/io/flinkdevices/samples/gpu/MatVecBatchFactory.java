package io.flinkdevices.samples.gpu;

import io.flinkdevices.job.batch.BatchBackend;
import io.flinkdevices.job.batch.BatchBackendFactory;
import io.flinkdevices.job.batch.BatchSettings;
import io.flinkdevices.sdk.info.DeviceSelection;
import io.flinkdevices.sdk.info.GpuInfo;

import org.apache.flink.api.common.functions.RuntimeContext;

/**
 * Opens a subtask's matrix-vector backend: takes the subtask's GPU with {@link
 * DeviceSelection#forSubtask} from {@code getExternalResourceInfos(resourceName)}, opens the GPU
 * path where CUDA starts on an NVIDIA GPU and the CPU path otherwise ({@link MatVecBatchBackends}),
 * prints which and why, and counts the path's work in accumulators: {@code records-gpu}, {@code
 * records-cpu}, {@code nanos-gpu}, {@code nanos-cpu} (time inside the batch calls, copies included),
 * {@code cpu-nanos-gpu}, {@code cpu-nanos-cpu} (the task thread's CPU time in them) and {@code
 * subtasks-gpu}, {@code subtasks-cpu}.
 */
final class MatVecBatchFactory implements BatchBackendFactory {

    private static final long serialVersionUID = 1L;

    private final String resourceName;
    private final int rows;
    private final int cols;
    private final long matrixSeed;

    /**
     * @param resourceName the external resource to take the GPU from, as in {@code
     *     external-resources: gpu}
     * @param matrixSeed every subtask builds the same matrix from this seed ({@link Matrix#generate})
     */
    MatVecBatchFactory(String resourceName, int rows, int cols, long matrixSeed) {
        this.resourceName = resourceName;
        this.rows = rows;
        this.cols = cols;
        this.matrixSeed = matrixSeed;
    }

    @Override
    public BatchBackend open(BatchSettings settings, RuntimeContext context) {
        int subtask = context.getTaskInfo().getIndexOfThisSubtask();
        GpuInfo gpu = DeviceSelection.forSubtask(context.getExternalResourceInfos(resourceName), subtask, GpuInfo::from)
                .orElse(null);
        MatVecBatchBackends.Opened opened =
                MatVecBatchBackends.open(gpu, Matrix.generate(rows, cols, matrixSeed), settings);
        String path = opened.gpu ? "gpu" : "cpu";
        System.out.println("MatrixVectorJob subtask " + subtask + ": " + opened.backend.describe()
                + (opened.cpuReason == null ? "" : ", because " + opened.cpuReason)
                + "; batches of " + settings.batchSize() + " vectors x " + rows + "x" + cols + " matrix");
        context.getLongCounter("subtasks-" + path).add(1);
        return new TimedBatchBackend(
                opened.backend, context.getLongCounter("records-" + path), context.getLongCounter("nanos-" + path),
                context.getLongCounter("cpu-nanos-" + path));
    }
}
