package io.flinkdevices.samples.gpu;

import io.flinkdevices.sdk.info.GpuInfo;

/** Picks the path for a subtask's GPU once, at open time. */
final class MatVecBackends {

    private MatVecBackends() {}

    /** A backend and, for the CPU path, why the GPU path was not taken. */
    static final class Choice {
        final MatVecBackend backend;
        /** Why the CPU path is used; null on the GPU path. */
        final String cpuReason;

        Choice(MatVecBackend backend, String cpuReason) {
            this.backend = backend;
            this.cpuReason = cpuReason;
        }
    }

    /**
     * A GPU path when {@code gpu} is an NVIDIA GPU and CUDA starts on it; otherwise the
     * CPU path with the reason. Never throws an {@link Error} from native loading.
     *
     * @param gpu the subtask's GPU, or null when its TaskManager received none
     */
    static Choice choose(GpuInfo gpu, Matrix matrix, int batchSize) {
        if (gpu == null) {
            return cpu(matrix, batchSize, "this TaskManager received no GPU");
        }
        if (!"nvidia".equals(gpu.getVendor())) {
            return cpu(
                    matrix,
                    batchSize,
                    describe(gpu) + " is a '" + gpu.getVendor() + "' GPU, not an NVIDIA one (both GPU paths need CUDA)");
        }
        GpuOpened opened = openGpu(gpu, matrix, batchSize);
        if (opened.backend != null) {
            return new Choice(opened.backend, null);
        }
        return cpu(matrix, batchSize, describe(gpu) + ": " + opened.reason);
    }

    /**
     * The fastest GPU path that opens on {@code gpu}: cuBLAS where cuBLAS 12 is installed, else the
     * sample's own CUDA kernel, which needs only the NVIDIA driver; when neither opens, both reasons.
     */
    static GpuOpened openGpu(GpuInfo gpu, Matrix matrix, int batchSize) {
        GpuOpened cublas = CublasMatVec.open(gpu, matrix, batchSize);
        if (cublas.backend != null) {
            return cublas;
        }
        GpuOpened kernel = CudaKernelMatVec.open(gpu, matrix, batchSize);
        if (kernel.backend != null) {
            return kernel;
        }
        // Both fail the same way when CUDA itself does not start: say it once.
        return GpuOpened.failed(
                cublas.reason.equals(kernel.reason) ? cublas.reason : cublas.reason + "; " + kernel.reason);
    }

    private static Choice cpu(Matrix matrix, int batchSize, String reason) {
        return new Choice(new CpuMatVec(matrix, batchSize), reason);
    }

    static String describe(GpuInfo gpu) {
        return "GPU #" + gpu.getIndex() + gpu.getUuid().map(u -> " " + u).orElse("");
    }
}
