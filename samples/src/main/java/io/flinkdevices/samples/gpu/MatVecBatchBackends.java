package io.flinkdevices.samples.gpu;

import io.flinkdevices.job.batch.BatchBackend;
import io.flinkdevices.job.batch.BatchSettings;
import io.flinkdevices.sdk.info.GpuInfo;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place the GPU sample picks a subtask's {@link BatchBackend}: on an NVIDIA GPU the
 * asynchronous path ({@link CudaBatchBackend}: page-locked slots, several batches in flight), else
 * a synchronous GPU path where {@link MatVecBackends#choose} opens one, else the CPU path with the
 * reason.
 */
final class MatVecBatchBackends {

    private static final Logger LOG = LoggerFactory.getLogger(MatVecBatchBackends.class);

    private MatVecBatchBackends() {}

    /** A backend and, for the CPU path, why the GPU path was not taken. */
    static final class Opened {
        final BatchBackend backend;
        final boolean gpu;
        /** Why the CPU path is used; null on the GPU path. */
        final String cpuReason;

        Opened(BatchBackend backend, boolean gpu, String cpuReason) {
            this.backend = backend;
            this.gpu = gpu;
            this.cpuReason = cpuReason;
        }
    }

    /**
     * The subtask's backend for {@code settings}: never throws an {@link Error} from native
     * loading.
     *
     * @param gpu the subtask's GPU, or null when its TaskManager received none
     */
    static Opened open(GpuInfo gpu, Matrix matrix, BatchSettings settings) {
        if (gpu != null && "nvidia".equals(gpu.getVendor())) {
            if (settings.batchSize() > CudaKernelMatVec.MAX_BATCH) {
                LOG.warn("GPU sample: batches of {} vectors are more than the asynchronous path's kernel takes ({} at most):"
                        + " the synchronous cuBLAS path, one batch in flight (--slots {} is not used)",
                        settings.batchSize(), CudaKernelMatVec.MAX_BATCH, settings.slots());
            } else {
                try {
                    CudaDevices.Found found = CudaDevices.find(gpu);
                    if (found.reason == null) {
                        return new Opened(
                                CudaBatchBackend.open(found.ordinal, matrix, settings.batchSize(), settings.slots()),
                                true,
                                null);
                    }
                    LOG.warn("GPU sample: no asynchronous path on GPU {}: {}", gpu.getUuid().orElse(String.valueOf(gpu.getIndex())),
                            found.reason);
                } catch (RuntimeException | LinkageError e) {
                    // CUDA does not start here: the synchronous paths below say why, or take the CPU
                    LOG.warn("GPU sample: the asynchronous path did not open on GPU {}: {}",
                            gpu.getUuid().orElse(String.valueOf(gpu.getIndex())), e.toString());
                }
            }
        }
        MatVecBackends.Choice choice = MatVecBackends.choose(gpu, matrix, settings.batchSize());
        if (choice.backend.path() == MatVecBackend.Path.CPU) {
            // CpuMatVec is a one-slot BatchBackend over its own buffers: no copy
            return new Opened((CpuMatVec) choice.backend, false, choice.cpuReason);
        }
        // A synchronous GPU path (cuBLAS), one slot
        return new Opened(new SyncMatVecBatchBackend(choice.backend, matrix.rows(), matrix.cols()), true, null);
    }

    /**
     * The GPU memory a backend allocates: the matrix, and an input and an output buffer per batch in
     * flight (the synchronous paths use one).
     */
    static long deviceBytes(int rows, int cols, int batchSize, int slots) {
        long matrix = (long) rows * cols * Float.BYTES;
        long perSlot = (long) batchSize * ((long) cols + rows) * Float.BYTES;
        return matrix + perSlot * Math.max(1, slots);
    }
}
