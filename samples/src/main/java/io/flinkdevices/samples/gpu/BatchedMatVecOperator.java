package io.flinkdevices.samples.gpu;

import io.flinkdevices.samples.BatchingOperator;
import io.flinkdevices.sdk.info.DeviceSelection;
import io.flinkdevices.sdk.info.GpuInfo;

import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import java.nio.FloatBuffer;

/**
 * Multiplies every incoming vector with one matrix, a batch at a time: records are gathered into
 * the backend's off-heap batch buffer and one device call ({@code matrix x batch}) serves the
 * whole batch, instead of one round trip per record as in Flink's {@code MatrixVectorMul}.
 *
 * <p>A batch is flushed when full, before a watermark is forwarded, before a checkpoint barrier
 * (so no record is held across a checkpoint and the operator needs no state), and at the end of
 * input. Timestamps are not kept.
 *
 * <p>At open, the subtask takes its GPU with {@link DeviceSelection#forSubtask} from {@code
 * getExternalResourceInfos(resourceName)} and uses the GPU path only when that GPU is an NVIDIA one
 * and CUDA starts on it (cuBLAS, or the sample's own kernel where cuBLAS 12 is missing); otherwise it
 * uses the CPU path and prints why. Accumulators
 * {@code records-gpu}, {@code records-cpu}, {@code nanos-gpu}, {@code nanos-cpu} (time inside the
 * batch calls, copies included) and {@code subtasks-gpu}, {@code subtasks-cpu} report the paths
 * taken.
 */
public final class BatchedMatVecOperator extends BatchingOperator<IdVector, IdVector> {

    private static final long serialVersionUID = 1L;

    private final String resourceName;
    private final int rows;
    private final int cols;
    private final long matrixSeed;
    private final int batchSize;

    private transient MatVecBackend backend;
    private transient long[] ids;
    private transient int count;
    private transient LongCounter records;
    private transient LongCounter nanos;

    /**
     * @param resourceName the external resource to take the GPU from, as in {@code
     *     external-resources: gpu}
     * @param rows rows of the matrix (length of a product)
     * @param cols columns of the matrix (length of an input vector)
     * @param matrixSeed every subtask builds the same matrix from this seed ({@link Matrix#generate})
     * @param batchSize vectors per device call
     */
    public BatchedMatVecOperator(String resourceName, int rows, int cols, long matrixSeed, int batchSize) {
        if (batchSize <= 0) {
            throw new IllegalArgumentException("batch size must be > 0 but is " + batchSize);
        }
        this.resourceName = resourceName;
        this.rows = rows;
        this.cols = cols;
        this.matrixSeed = matrixSeed;
        this.batchSize = batchSize;
    }

    @Override
    public void open() throws Exception {
        super.open();
        int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        GpuInfo gpu =
                DeviceSelection.forSubtask(
                                getRuntimeContext().getExternalResourceInfos(resourceName), subtask, GpuInfo::from)
                        .orElse(null);
        MatVecBackends.Choice choice = MatVecBackends.choose(gpu, Matrix.generate(rows, cols, matrixSeed), batchSize);
        backend = choice.backend;
        String path = backend.path() == MatVecBackend.Path.GPU ? "gpu" : "cpu";
        System.out.println(
                "MatrixVectorJob subtask "
                        + subtask
                        + ": "
                        + backend.describe()
                        + (choice.cpuReason == null ? "" : ", because " + choice.cpuReason)
                        + "; batches of "
                        + batchSize
                        + " vectors x "
                        + rows
                        + "x"
                        + cols
                        + " matrix");
        records = getRuntimeContext().getLongCounter("records-" + path);
        nanos = getRuntimeContext().getLongCounter("nanos-" + path);
        getRuntimeContext().getLongCounter("subtasks-" + path).add(1);
        ids = new long[batchSize];
        count = 0;
    }

    @Override
    public void processElement(StreamRecord<IdVector> element) throws Exception {
        IdVector v = element.getValue();
        if (v.values.length != cols) {
            throw new IllegalArgumentException(
                    "record " + v.id + " has " + v.values.length + " values but the matrix has " + cols + " columns");
        }
        FloatBuffer in = backend.input();
        in.put(count * cols, v.values, 0, cols);
        ids[count++] = v.id;
        if (count == batchSize) {
            flush();
        }
    }

    @Override
    protected void flush() {
        if (count == 0) {
            return;
        }
        long start = System.nanoTime();
        backend.multiply(count);
        nanos.add(System.nanoTime() - start);
        records.add(count);
        FloatBuffer out = backend.output();
        for (int k = 0; k < count; k++) {
            float[] product = new float[rows];
            out.get(k * rows, product, 0, rows);
            output.collect(new StreamRecord<>(new IdVector(ids[k], product)));
        }
        count = 0;
    }

    @Override
    protected void closeDevice() {
        if (backend != null) {
            backend.close();
            backend = null;
        }
    }

    @Override
    public String toString() {
        return "BatchedMatVecOperator{" + rows + "x" + cols + ", batch " + batchSize + "}";
    }
}
