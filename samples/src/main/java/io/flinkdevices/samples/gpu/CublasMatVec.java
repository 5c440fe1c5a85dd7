package io.flinkdevices.samples.gpu;

import io.flinkdevices.sdk.info.GpuInfo;

import jcuda.Pointer;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasHandle;
import jcuda.jcublas.cublasOperation;
import jcuda.jcublas.cublasStatus;
import jcuda.runtime.JCuda;
import jcuda.runtime.cudaMemcpyKind;


/**
 * The GPU path: JCublas {@code cublasSgemm} on the device a subtask's {@link GpuInfo} names. The
 * matrix is copied to the device once; each batch costs one host-to-device copy, one {@code
 * Sgemm} ({@code rows x cols} times {@code cols x count}) and one device-to-host copy, whatever the
 * batch size. The batch buffers are page-locked host memory ({@code cudaHostAlloc}), which the
 * copies read and write directly.
 *
 * <p>Return codes are checked instead of relying on JCuda's exceptions (a JVM-wide switch other
 * code may have set either way); both are turned into {@link IllegalStateException}s.
 */
final class CublasMatVec extends GpuMatVec {

    private final cublasHandle handle = new cublasHandle();
    private final Pointer dA = new Pointer();
    private final Pointer dX = new Pointer();
    private final Pointer dY = new Pointer();
    private boolean handleCreated;

    private CublasMatVec(int device, Matrix matrix, int batchSize, String deviceName) {
        super(device, matrix, batchSize, deviceName);
    }

    /**
     * Opens the GPU path on {@code gpu}, or says why it cannot: no JCuda or cuBLAS native library
     * ({@link LinkageError}s are caught here and never escape), no CUDA driver, no such device,
     * not enough device memory.
     */
    static GpuOpened open(GpuInfo gpu, Matrix matrix, int batchSize) {
        try {
            return openChecked(gpu, matrix, batchSize);
        } catch (LinkageError e) {
            return GpuOpened.failed(
                    "JCublas could not be loaded ("
                            + CudaDevices.nativeReason(e)
                            + "); cuBLAS needs the CUDA driver (libcuda.so.1) and cuBLAS 12 (libcublas.so.12)"
                            + " on the library path, and JCuda loaded by one class loader per JVM");
        } catch (RuntimeException e) {
            return GpuOpened.failed("cuBLAS failed to start: " + e.getMessage());
        }
    }

    private static GpuOpened openChecked(GpuInfo gpu, Matrix matrix, int batchSize) {
        CudaDevices.Found found = CudaDevices.find(gpu);
        if (found.reason != null) {
            return GpuOpened.failed(found.reason);
        }
        CublasMatVec b = new CublasMatVec(found.ordinal, matrix, batchSize, found.description);
        try {
            b.allocate(matrix);
            return GpuOpened.of(b);
        } catch (RuntimeException | LinkageError e) {
            b.close();
            throw e;
        }
    }

    private void allocate(Matrix matrix) {
        checkBlas(JCublas2.cublasCreate(handle), "cublasCreate");
        handleCreated = true;
        long aBytes = (long) rows * cols * Float.BYTES;
        long xBytes = inputBytes();
        long yBytes = outputBytes();
        CudaDevices.check(JCuda.cudaMalloc(dA, aBytes), "cudaMalloc(matrix, " + aBytes + " bytes)");
        CudaDevices.check(JCuda.cudaMalloc(dX, xBytes), "cudaMalloc(batch in, " + xBytes + " bytes)");
        CudaDevices.check(JCuda.cudaMalloc(dY, yBytes), "cudaMalloc(batch out, " + yBytes + " bytes)");
        CudaDevices.check(JCuda.cudaHostAlloc(hX, xBytes, JCuda.cudaHostAllocDefault), "cudaHostAlloc(batch in)");
        CudaDevices.check(JCuda.cudaHostAlloc(hY, yBytes, JCuda.cudaHostAllocDefault), "cudaHostAlloc(batch out)");
        mapHostBuffers();
        CudaDevices.check(
                JCuda.cudaMemcpy(dA, Pointer.to(matrix.columnMajor()), aBytes, cudaMemcpyKind.cudaMemcpyHostToDevice),
                "cudaMemcpy(matrix to device)");
    }

    @Override
    public void multiply(int count) {
        if (count <= 0) {
            return;
        }
        // The current device is per host thread; the caller's thread may differ from open()'s.
        CudaDevices.check(JCuda.cudaSetDevice(device), "cudaSetDevice(" + device + ")");
        CudaDevices.check(
                JCuda.cudaMemcpy(dX, hX, (long) count * cols * Float.BYTES, cudaMemcpyKind.cudaMemcpyHostToDevice),
                "cudaMemcpy(batch to device)");
        // Column-major: A is rows x cols (lda = rows), the batch is cols x count (each vector a
        // column), the products rows x count (each product a column).
        checkBlas(
                JCublas2.cublasSgemm(
                        handle,
                        cublasOperation.CUBLAS_OP_N,
                        cublasOperation.CUBLAS_OP_N,
                        rows,
                        count,
                        cols,
                        Pointer.to(new float[] {1f}),
                        dA,
                        rows,
                        dX,
                        cols,
                        Pointer.to(new float[] {0f}),
                        dY,
                        rows),
                "cublasSgemm");
        CudaDevices.check(
                JCuda.cudaMemcpy(hY, dY, (long) count * rows * Float.BYTES, cudaMemcpyKind.cudaMemcpyDeviceToHost),
                "cudaMemcpy(products to host)");
    }

    @Override
    public String describe() {
        return "GPU path: JCublas cublasSgemm on CUDA device " + device + " (" + deviceName + ")";
    }

    @Override
    void release() {
        if (handleCreated) {
            JCublas2.cublasDestroy(handle);
        }
        JCuda.cudaFree(dA);
        JCuda.cudaFree(dX);
        JCuda.cudaFree(dY);
        JCuda.cudaFreeHost(hX);
        JCuda.cudaFreeHost(hY);
    }

    private static void checkBlas(int rc, String what) {
        if (rc != cublasStatus.CUBLAS_STATUS_SUCCESS) {
            throw new IllegalStateException(what + " failed: " + cublasStatus.stringFor(rc));
        }
    }
}
