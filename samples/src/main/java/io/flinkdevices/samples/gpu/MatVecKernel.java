package io.flinkdevices.samples.gpu;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;

/**
 * The sample's matvec kernel ({@code src/main/cuda/matvec.cu}, the PTX {@link CudaKernelMatVec}
 * ships) loaded into the current context, launched on a stream: one thread per (product row,
 * vector), {@value #THREADS} threads a block, one block row per vector. The kernel sums in the
 * CPU path's order with separate multiply and add, so its products equal {@link CpuMatVec}'s bit
 * for bit.
 */
final class MatVecKernel {

    static final int THREADS = 128;

    private final CUmodule module = new CUmodule();
    private final CUfunction function = new CUfunction();
    private final String device;
    private boolean loaded;

    MatVecKernel(String device) {
        this.device = device;
    }

    /** Loads the PTX (the driver compiles it for this GPU) into the current context. */
    void load() {
        CudaCheck.check(
                JCudaDriver.cuModuleLoadData(module, CudaKernelMatVec.ptx()),
                device,
                "cuModuleLoadData(" + CudaKernelMatVec.PTX + ")");
        loaded = true;
        CudaCheck.check(JCudaDriver.cuModuleGetFunction(function, module, "matvec"), device, "cuModuleGetFunction(matvec)");
    }

    /** The launch's parameters, built once per slot; {@link #launch} sets the vector count. */
    static final class Params {
        final int[] count = new int[1];
        final Pointer pointer;

        Params(CUdeviceptr a, CUdeviceptr x, CUdeviceptr y, int rows, int cols) {
            // CUDA copies the parameters at launch, so one array per slot can be reused.
            pointer =
                    Pointer.to(
                            Pointer.to(a),
                            Pointer.to(x),
                            Pointer.to(y),
                            Pointer.to(new int[] {rows}),
                            Pointer.to(new int[] {cols}),
                            Pointer.to(count));
        }
    }

    /** Queues the products of {@code count} vectors on {@code stream}; returns at once. */
    void launch(CUstream stream, Params params, int rows, int count) {
        params.count[0] = count;
        int blocks = (rows + THREADS - 1) / THREADS;
        CudaCheck.check(
                JCudaDriver.cuLaunchKernel(function, blocks, count, 1, THREADS, 1, 1, 0, stream, params.pointer, null),
                device,
                "cuLaunchKernel(matvec, " + count + " vectors)");
    }

    /** Unloads the module, once; the return code is ignored (closing must not throw). */
    void unload() {
        if (loaded) {
            loaded = false;
            JCudaDriver.cuModuleUnload(module);
        }
    }
}
