package io.flinkdevices.samples.gpu;

import io.flinkdevices.sdk.info.GpuInfo;

import jcuda.Pointer;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasHandle;
import jcuda.jcublas.cublasOperation;
import jcuda.jcublas.cublasStatus;
import jcuda.runtime.JCuda;
import jcuda.runtime.cudaDeviceProp;
import jcuda.runtime.cudaMemcpyKind;

import java.nio.ByteOrder;
import java.nio.FloatBuffer;

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
final class CublasMatVec implements MatVecBackend {

    private final int device;
    private final int rows;
    private final int cols;
    private final int batchSize;
    private final String deviceName;
    private final cublasHandle handle = new cublasHandle();
    private final Pointer dA = new Pointer();
    private final Pointer dX = new Pointer();
    private final Pointer dY = new Pointer();
    private final Pointer hX = new Pointer();
    private final Pointer hY = new Pointer();
    private boolean handleCreated;
    private FloatBuffer input;
    private FloatBuffer output;
    private boolean closed;

    private CublasMatVec(int device, Matrix matrix, int batchSize, String deviceName) {
        this.device = device;
        this.rows = matrix.rows();
        this.cols = matrix.cols();
        this.batchSize = batchSize;
        this.deviceName = deviceName;
    }

    /** Result of {@link #open}: a backend, or why there is none. */
    static final class Opened {
        final CublasMatVec backend;
        final String reason;

        private Opened(CublasMatVec backend, String reason) {
            this.backend = backend;
            this.reason = reason;
        }
    }

    /**
     * Opens the GPU path on {@code gpu}, or says why it cannot: no JCuda or cuBLAS native library
     * ({@link LinkageError}s are caught here and never escape), no CUDA driver, no such device,
     * not enough device memory.
     */
    static Opened open(GpuInfo gpu, Matrix matrix, int batchSize) {
        try {
            return openChecked(gpu, matrix, batchSize);
        } catch (LinkageError e) {
            return new Opened(
                    null,
                    "JCuda/JCublas could not be loaded ("
                            + e
                            + "); the GPU path needs the CUDA driver (libcuda.so.1) and cuBLAS 12 (libcublas.so.12)"
                            + " on the library path, and JCuda loaded by one class loader per JVM");
        } catch (RuntimeException e) {
            return new Opened(null, "the GPU path failed to start: " + e.getMessage());
        }
    }

    private static Opened openChecked(GpuInfo gpu, Matrix matrix, int batchSize) {
        int[] count = new int[1];
        int rc = JCuda.cudaGetDeviceCount(count);
        if (rc != 0) {
            return new Opened(null, "CUDA reports no usable device: cudaGetDeviceCount returned " + cudaError(rc));
        }
        String[] how = new String[1];
        int index = cudaOrdinal(gpu, count[0], how);
        if (index < 0) {
            return new Opened(
                    null,
                    "GPU #"
                            + gpu.getIndex()
                            + gpu.getUuid().map(u -> " " + u).orElse("")
                            + " is not among the "
                            + count[0]
                            + " devices CUDA sees in this process (CUDA_VISIBLE_DEVICES="
                            + System.getenv().getOrDefault("CUDA_VISIBLE_DEVICES", "<unset>")
                            + ")");
        }
        check(JCuda.cudaSetDevice(index), "cudaSetDevice(" + index + ")");
        cudaDeviceProp prop = new cudaDeviceProp();
        check(JCuda.cudaGetDeviceProperties(prop, index), "cudaGetDeviceProperties");
        CublasMatVec b = new CublasMatVec(index, matrix, batchSize, prop.getName() + ", " + how[0]);
        try {
            b.allocate(matrix);
            return new Opened(b, null);
        } catch (RuntimeException | LinkageError e) {
            b.close();
            throw e;
        }
    }

    /**
     * The CUDA ordinal of {@code gpu}: CUDA numbers only the devices this process sees (after
     * {@code CUDA_VISIBLE_DEVICES}), so the driver's index is the last resort. Matched by UUID
     * first, then by PCI address, then by index; -1 when none matches.
     */
    private static int cudaOrdinal(GpuInfo gpu, int count, String[] how) {
        if (gpu.getUuid().isPresent()) {
            String wanted = gpu.getUuid().get();
            for (int d = 0; d < count; d++) {
                cudaDeviceProp p = new cudaDeviceProp();
                if (JCuda.cudaGetDeviceProperties(p, d) == 0
                        && p.uuid != null
                        && wanted.equalsIgnoreCase(formatUuid(p.uuid.bytes))) {
                    how[0] = "matched by UUID " + wanted;
                    return d;
                }
            }
        }
        if (gpu.getPciAddress().isPresent()) {
            int[] d = new int[1];
            if (JCuda.cudaDeviceGetByPCIBusId(d, gpu.getPciAddress().get()) == 0) {
                how[0] = "matched by PCI address " + gpu.getPciAddress().get();
                return d[0];
            }
        }
        if (gpu.getUuid().isEmpty() && gpu.getPciAddress().isEmpty() && gpu.getIndex() < count) {
            how[0] = "by index " + gpu.getIndex();
            return gpu.getIndex();
        }
        return -1;
    }

    /** A CUDA UUID as nvidia-smi prints it: {@code GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}. */
    static String formatUuid(byte[] bytes) {
        if (bytes == null || bytes.length != 16) {
            return null;
        }
        StringBuilder sb = new StringBuilder("GPU-");
        for (int i = 0; i < 16; i++) {
            if (i == 4 || i == 6 || i == 8 || i == 10) {
                sb.append('-');
            }
            sb.append(String.format(java.util.Locale.ROOT, "%02x", bytes[i] & 0xff));
        }
        return sb.toString();
    }

    private void allocate(Matrix matrix) {
        checkBlas(JCublas2.cublasCreate(handle), "cublasCreate");
        handleCreated = true;
        long aBytes = (long) rows * cols * Float.BYTES;
        long xBytes = (long) batchSize * cols * Float.BYTES;
        long yBytes = (long) batchSize * rows * Float.BYTES;
        check(JCuda.cudaMalloc(dA, aBytes), "cudaMalloc(matrix, " + aBytes + " bytes)");
        check(JCuda.cudaMalloc(dX, xBytes), "cudaMalloc(batch in, " + xBytes + " bytes)");
        check(JCuda.cudaMalloc(dY, yBytes), "cudaMalloc(batch out, " + yBytes + " bytes)");
        check(JCuda.cudaHostAlloc(hX, xBytes, JCuda.cudaHostAllocDefault), "cudaHostAlloc(batch in)");
        check(JCuda.cudaHostAlloc(hY, yBytes, JCuda.cudaHostAllocDefault), "cudaHostAlloc(batch out)");
        input = hX.getByteBuffer(0, xBytes).order(ByteOrder.nativeOrder()).asFloatBuffer();
        output = hY.getByteBuffer(0, yBytes).order(ByteOrder.nativeOrder()).asFloatBuffer();
        check(
                JCuda.cudaMemcpy(dA, Pointer.to(matrix.columnMajor()), aBytes, cudaMemcpyKind.cudaMemcpyHostToDevice),
                "cudaMemcpy(matrix to device)");
    }

    @Override
    public Path path() {
        return Path.GPU;
    }

    @Override
    public FloatBuffer input() {
        return input;
    }

    @Override
    public FloatBuffer output() {
        return output;
    }

    @Override
    public int batchSize() {
        return batchSize;
    }

    @Override
    public void multiply(int count) {
        if (count <= 0) {
            return;
        }
        // The current device is per host thread; the caller's thread may differ from open()'s.
        check(JCuda.cudaSetDevice(device), "cudaSetDevice(" + device + ")");
        check(
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
        check(
                JCuda.cudaMemcpy(hY, dY, (long) count * rows * Float.BYTES, cudaMemcpyKind.cudaMemcpyDeviceToHost),
                "cudaMemcpy(products to host)");
    }

    @Override
    public String describe() {
        return "GPU path: JCublas cublasSgemm on CUDA device " + device + " (" + deviceName + ")";
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            JCuda.cudaSetDevice(device);
            if (handleCreated) {
                JCublas2.cublasDestroy(handle);
            }
            JCuda.cudaFree(dA);
            JCuda.cudaFree(dX);
            JCuda.cudaFree(dY);
            JCuda.cudaFreeHost(hX);
            JCuda.cudaFreeHost(hY);
        } catch (RuntimeException | LinkageError e) {
            System.err.println("GPU path: releasing device memory failed: " + e);
        }
        input = null;
        output = null;
    }

    private static void check(int rc, String what) {
        if (rc != 0) {
            throw new IllegalStateException(what + " failed: " + cudaError(rc));
        }
    }

    private static void checkBlas(int rc, String what) {
        if (rc != cublasStatus.CUBLAS_STATUS_SUCCESS) {
            throw new IllegalStateException(what + " failed: " + cublasStatus.stringFor(rc));
        }
    }

    private static String cudaError(int rc) {
        String text;
        try {
            text = JCuda.cudaGetErrorString(rc);
        } catch (RuntimeException | LinkageError e) {
            text = "?";
        }
        return rc + " (" + text + ")";
    }
}
