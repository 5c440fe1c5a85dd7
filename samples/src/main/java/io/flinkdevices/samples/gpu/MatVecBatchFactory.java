package io.flinkdevices.samples.gpu;

import io.flinkdevices.job.DeviceLease;
import io.flinkdevices.job.batch.BatchBackend;
import io.flinkdevices.job.batch.BatchBackendFactory;
import io.flinkdevices.job.batch.BatchSettings;
import io.flinkdevices.job.batch.LeasedBatchBackend;
import io.flinkdevices.samples.SampleLeases;
import io.flinkdevices.sdk.info.GpuInfo;

import org.apache.flink.api.common.functions.RuntimeContext;

import java.util.Optional;
import java.util.OptionalLong;

/**
 * Opens a subtask's matrix-vector backend: leases the subtask's GPU, or its share of one ({@link
 * SampleLeases}), keeps the GPU memory it allocates inside the lease's budget, opens the GPU
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
    private final double share;

    /**
     * @param resourceName the external resource to take the GPU from, as in {@code
     *     external-resources: gpu}
     * @param matrixSeed every subtask builds the same matrix from this seed ({@link Matrix#generate})
     * @param share how much of one GPU a subtask leases: 1 for a whole GPU, 0.5 for two subtasks per GPU
     */
    MatVecBatchFactory(String resourceName, int rows, int cols, long matrixSeed, double share) {
        this.resourceName = resourceName;
        this.rows = rows;
        this.cols = cols;
        this.matrixSeed = matrixSeed;
        this.share = share;
    }

    @Override
    public BatchBackend open(BatchSettings settings, RuntimeContext context) {
        int subtask = context.getTaskInfo().getIndexOfThisSubtask();
        Optional<DeviceLease> lease = SampleLeases.lease(context, resourceName, share);
        try {
            GpuInfo gpu = lease.map(l -> l.first(GpuInfo::from)).orElse(null);
            if (lease.isPresent()) {
                checkBudget(lease.get(), settings);
            }
            MatVecBatchBackends.Opened opened =
                    MatVecBatchBackends.open(gpu, Matrix.generate(rows, cols, matrixSeed), settings);
            String path = opened.gpu ? "gpu" : "cpu";
            System.out.println("MatrixVectorJob subtask " + subtask + ": " + opened.backend.describe()
                    + (opened.cpuReason == null ? "" : ", because " + opened.cpuReason)
                    + "; batches of " + settings.batchSize() + " vectors x " + rows + "x" + cols + " matrix"
                    + lease.map(l -> "; leased " + l).orElse(""));
            context.getLongCounter("subtasks-" + path).add(1);
            BatchBackend timed = new TimedBatchBackend(
                    opened.backend, context.getLongCounter("records-" + path), context.getLongCounter("nanos-" + path),
                    context.getLongCounter("cpu-nanos-" + path));
            return lease.isPresent() ? new LeasedBatchBackend(timed, lease.get()) : timed;
        } catch (RuntimeException | Error e) {
            lease.ifPresent(DeviceLease::close);
            throw e;
        }
    }

    /**
     * Refuses to open when the matrix and the batches in flight would take more GPU memory than the
     * lease's budget (its share of the GPU's memory), so that tasks sharing a GPU stay inside their part.
     */
    private void checkBudget(DeviceLease lease, BatchSettings settings) {
        OptionalLong budget = lease.memoryBudgetBytes();
        long needed = MatVecBatchBackends.deviceBytes(rows, cols, settings.batchSize(), settings.slots());
        if (budget.isPresent() && needed > budget.getAsLong()) {
            throw new IllegalArgumentException("MatrixVectorJob: a " + rows + "x" + cols + " matrix and "
                    + settings.slots() + " batches of " + settings.batchSize() + " vectors need " + needed
                    + " bytes of GPU memory, more than this subtask's lease allows: " + budget.getAsLong()
                    + " bytes (" + lease + "); use a smaller --dims, --batch or --slots, or fewer --per-gpu");
        }
    }
}
