package io.flinkdevices.samples.gpu;

import io.flinkdevices.sdk.info.GpuInfo;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;
import jcuda.runtime.JCuda;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;

/**
 * The GPU path for hosts with the NVIDIA driver but no cuBLAS 12: the sample's own kernel ({@code
 * src/main/cuda/matvec.cu}, shipped as PTX that the driver compiles for the GPU it runs on),
 * launched through the CUDA driver API, so {@code libcuda.so.1} is all it needs. One thread per
 * (product row, vector), one launch per batch; every product is summed in the CPU path's order
 * with separate multiply and add, so its products equal the CPU path's bit for bit.
 */
final class CudaKernelMatVec extends GpuMatVec {

    /** The PTX on the class path, next to this class. */
    static final String PTX = "matvec.ptx";

    private static final int THREADS = 128;
    /** CUDA's limit for a grid's y dimension: at most this many vectors per launch. */
    static final int MAX_BATCH = 65_535;

    private final CUmodule module = new CUmodule();
    private final CUfunction function = new CUfunction();
    private final CUdeviceptr dA = new CUdeviceptr();
    private final CUdeviceptr dX = new CUdeviceptr();
    private final CUdeviceptr dY = new CUdeviceptr();
    private boolean moduleLoaded;

    private CudaKernelMatVec(int device, Matrix matrix, int batchSize, String deviceName) {
        super(device, matrix, batchSize, deviceName);
    }

    /**
     * Opens the kernel path on {@code gpu}, or says why it cannot: JCuda's native library or the CUDA
     * driver missing ({@link LinkageError}s never escape), no such device, the PTX refused by the
     * driver, not enough device memory.
     */
    static GpuOpened open(GpuInfo gpu, Matrix matrix, int batchSize) {
        if (batchSize < 1 || batchSize > MAX_BATCH) {
            return GpuOpened.failed("the CUDA kernel takes batches of 1 to " + MAX_BATCH + " vectors, not " + batchSize);
        }
        try {
            CudaDevices.Found found = CudaDevices.find(gpu);
            if (found.reason != null) {
                return GpuOpened.failed(found.reason);
            }
            CudaKernelMatVec b = new CudaKernelMatVec(found.ordinal, matrix, batchSize, found.description);
            try {
                b.load(matrix);
                return GpuOpened.of(b);
            } catch (RuntimeException | LinkageError e) {
                b.close();
                throw e;
            }
        } catch (LinkageError e) {
            return GpuOpened.failed(
                    "JCuda could not be loaded ("
                            + CudaDevices.nativeReason(e)
                            + "); the CUDA kernel needs the NVIDIA driver's libcuda.so.1 on the library path");
        } catch (RuntimeException e) {
            return GpuOpened.failed("the CUDA kernel failed to start: " + e.getMessage());
        }
    }

    private void load(Matrix matrix) {
        check(JCudaDriver.cuInit(0), "cuInit");
        check(JCudaDriver.cuModuleLoadData(module, ptx()), "cuModuleLoadData(" + PTX + ")");
        moduleLoaded = true;
        check(JCudaDriver.cuModuleGetFunction(function, module, "matvec"), "cuModuleGetFunction(matvec)");
        long aBytes = (long) rows * cols * Float.BYTES;
        long xBytes = inputBytes();
        long yBytes = outputBytes();
        check(JCudaDriver.cuMemAlloc(dA, aBytes), "cuMemAlloc(matrix, " + aBytes + " bytes)");
        check(JCudaDriver.cuMemAlloc(dX, xBytes), "cuMemAlloc(batch in, " + xBytes + " bytes)");
        check(JCudaDriver.cuMemAlloc(dY, yBytes), "cuMemAlloc(batch out, " + yBytes + " bytes)");
        check(JCudaDriver.cuMemAllocHost(hX, xBytes), "cuMemAllocHost(batch in)");
        check(JCudaDriver.cuMemAllocHost(hY, yBytes), "cuMemAllocHost(batch out)");
        mapHostBuffers();
        check(JCudaDriver.cuMemcpyHtoD(dA, Pointer.to(matrix.columnMajor()), aBytes), "cuMemcpyHtoD(matrix)");
    }

    /** The PTX text, NUL-terminated as {@code cuModuleLoadData} reads it. */
    static byte[] ptx() {
        try (InputStream in = CudaKernelMatVec.class.getResourceAsStream(PTX)) {
            if (in == null) {
                throw new IllegalStateException(PTX + " is missing from the class path next to " + CudaKernelMatVec.class);
            }
            byte[] text = in.readAllBytes();
            return Arrays.copyOf(text, text.length + 1);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + PTX + " from the class path", e);
        }
    }

    @Override
    public void multiply(int count) {
        if (count <= 0) {
            return;
        }
        // The current context is per host thread; the caller's thread may differ from open()'s.
        CudaDevices.check(JCuda.cudaSetDevice(device), "cudaSetDevice(" + device + ")");
        check(JCudaDriver.cuMemcpyHtoD(dX, hX, (long) count * cols * Float.BYTES), "cuMemcpyHtoD(batch)");
        Pointer params =
                Pointer.to(
                        Pointer.to(dA),
                        Pointer.to(dX),
                        Pointer.to(dY),
                        Pointer.to(new int[] {rows}),
                        Pointer.to(new int[] {cols}),
                        Pointer.to(new int[] {count}));
        int blocks = (rows + THREADS - 1) / THREADS;
        check(JCudaDriver.cuLaunchKernel(function, blocks, count, 1, THREADS, 1, 1, 0, null, params, null), "cuLaunchKernel(matvec)");
        // A synchronous copy on the default stream: it waits for the kernel.
        check(JCudaDriver.cuMemcpyDtoH(hY, dY, (long) count * rows * Float.BYTES), "cuMemcpyDtoH(products)");
    }

    @Override
    public String describe() {
        return "GPU path: the sample's CUDA kernel (PTX through the CUDA driver API) on CUDA device "
                + device
                + " ("
                + deviceName
                + ")";
    }

    @Override
    void release() {
        JCudaDriver.cuMemFree(dA);
        JCudaDriver.cuMemFree(dX);
        JCudaDriver.cuMemFree(dY);
        JCudaDriver.cuMemFreeHost(hX);
        JCudaDriver.cuMemFreeHost(hY);
        if (moduleLoaded) {
            JCudaDriver.cuModuleUnload(module);
        }
    }

    private static void check(int rc, String what) {
        if (rc != CUresult.CUDA_SUCCESS) {
            throw new IllegalStateException(what + " failed: " + rc + " (" + CUresult.stringFor(rc) + ")");
        }
    }
}
