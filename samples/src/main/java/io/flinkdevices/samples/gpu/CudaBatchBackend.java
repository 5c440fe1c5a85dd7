package io.flinkdevices.samples.gpu;

import io.flinkdevices.job.batch.BatchBackend;

import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The GPU path with several batches in flight: the sample's CUDA kernel ({@link MatVecKernel})
 * behind {@link BatchBackend}. Every slot has page-locked host buffers ({@link HostBuffers}),
 * device buffers of its own and a CUDA stream of its own; {@link #start} queues copy in, kernel
 * and copy out on the slot's stream and returns. Work on different streams runs concurrently, so
 * the copy in of one slot, the kernel of another and the copy out of a third overlap, and the
 * GPU's two copy engines (one per direction) are busy at once. An event recorded after the copy
 * out is what {@link #finish} polls, with a deadline ({@link BoundedWait}).
 *
 * <p>Records are vectors of {@code cols} floats in, products of {@code rows} floats out, native
 * byte order; the products equal {@link CpuMatVec}'s bit for bit. Every error names the device
 * and CUDA's error name. Driver API only (primary context of the device), so the NVIDIA driver's
 * {@code libcuda.so.1} is all it needs.
 */
public final class CudaBatchBackend implements BatchBackend {

    private static final Logger LOG = LoggerFactory.getLogger(CudaBatchBackend.class);

    /** The most slots: more than three buys nothing once both copy engines are busy. */
    public static final int MAX_SLOTS = 16;
    /** The longest {@link #finish} waits for one batch, unless opened with another limit. */
    public static final Duration FINISH_TIMEOUT = Duration.ofSeconds(60);

    private final int ordinal;
    /** "CUDA device 0", then with the device's name once CUDA knows it: every message starts with it. */
    private String device;
    private final int rows;
    private final int cols;
    private final int batchSize;
    private final int slots;
    private final long finishTimeoutNanos;
    private final CUdevice cuDevice = new CUdevice();
    private final CUcontext context = new CUcontext();
    private MatVecKernel kernel;
    private final CUdeviceptr deviceMatrix = new CUdeviceptr();
    private final CUdeviceptr[] deviceIn;
    private final CUdeviceptr[] deviceOut;
    private final CUstream[] streams;
    private final CUevent[] done;
    private final MatVecKernel.Params[] params;
    private final int[] inFlight;
    private HostBuffers host;
    private boolean contextRetained;
    private boolean closed;
    /** Set when a batch did not finish in time: its memory may still be in use by the device. */
    private boolean stuck;

    private CudaBatchBackend(int ordinal, Matrix m, int batchSize, int slots, Duration finishTimeout) {
        this.ordinal = ordinal;
        this.device = "CUDA device " + ordinal;
        this.rows = m.rows();
        this.cols = m.cols();
        this.batchSize = batchSize;
        this.slots = slots;
        this.finishTimeoutNanos = finishTimeout.toNanos();
        this.deviceIn = new CUdeviceptr[slots];
        this.deviceOut = new CUdeviceptr[slots];
        this.streams = new CUstream[slots];
        this.done = new CUevent[slots];
        this.params = new MatVecKernel.Params[slots];
        this.inFlight = new int[slots];
    }

    /**
     * Opens the asynchronous GPU path on CUDA device {@code cudaDevice} (the ordinal CUDA gives it
     * in this process, e.g. {@link CudaDevices#find}'s) with {@code slots} slots of {@code
     * batchSize} vectors, and uploads the matrix.
     *
     * @throws IllegalArgumentException naming the argument and its range when one cannot work
     * @throws IllegalStateException naming the device and CUDA's error when CUDA does not start
     *     (also when JCuda's native library cannot load: no {@link Error} escapes)
     */
    public static CudaBatchBackend open(int cudaDevice, Matrix matrix, int batchSize, int slots) {
        return open(cudaDevice, matrix, batchSize, slots, HostBuffers.CUDA, FINISH_TIMEOUT);
    }

    /** As {@link #open(int, Matrix, int, int)}, with the page-locked memory and the wait of {@link #finish} given. */
    static CudaBatchBackend open(
            int cudaDevice, Matrix matrix, int batchSize, int slots, HostBuffers.PinnedMemory pinned, Duration finishTimeout) {
        validate(cudaDevice, matrix, batchSize, slots);
        CudaBatchBackend b = new CudaBatchBackend(cudaDevice, matrix, batchSize, slots, finishTimeout);
        try {
            b.allocate(matrix, pinned);
            return b;
        } catch (RuntimeException e) {
            b.close();
            throw e;
        } catch (LinkageError e) {
            b.close();
            throw new IllegalStateException(
                    "CUDA device " + cudaDevice + ": JCuda could not be loaded (" + CudaDevices.nativeReason(e)
                            + "); the CUDA kernel needs the NVIDIA driver's libcuda.so.1 on the library path");
        }
    }

    static void validate(int cudaDevice, Matrix matrix, int batchSize, int slots) {
        if (cudaDevice < 0) {
            throw new IllegalArgumentException("cudaDevice must be a CUDA device ordinal, 0 or more, not " + cudaDevice);
        }
        if (matrix == null) {
            throw new IllegalArgumentException("matrix must not be null");
        }
        if (slots < 1 || slots > MAX_SLOTS) {
            throw new IllegalArgumentException("slots must be 1 to " + MAX_SLOTS + " batches in flight, not " + slots);
        }
        if (batchSize < 1 || batchSize > CudaKernelMatVec.MAX_BATCH) {
            throw new IllegalArgumentException(
                    "batchSize must be 1 to " + CudaKernelMatVec.MAX_BATCH + " vectors (one kernel launch), not " + batchSize);
        }
        long widest = (long) batchSize * Math.max(matrix.rows(), matrix.cols()) * Float.BYTES;
        if (widest > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    "batchSize " + batchSize + " makes a batch buffer of " + widest + " bytes for a " + matrix.rows() + "x"
                            + matrix.cols() + " matrix; the most is " + Integer.MAX_VALUE
                            + " bytes, so batchSize must be 1 to "
                            + Integer.MAX_VALUE / ((long) Math.max(matrix.rows(), matrix.cols()) * Float.BYTES));
        }
    }

    private void allocate(Matrix m, HostBuffers.PinnedMemory pinned) {
        check(JCudaDriver.cuInit(0), "cuInit");
        int[] count = new int[1];
        check(JCudaDriver.cuDeviceGetCount(count), "cuDeviceGetCount");
        if (ordinal >= count[0]) {
            throw new IllegalStateException(
                    device + " does not exist: CUDA sees " + count[0] + " device(s) in this process (CUDA_VISIBLE_DEVICES="
                            + System.getenv().getOrDefault("CUDA_VISIBLE_DEVICES", "<unset>") + ")");
        }
        check(JCudaDriver.cuDeviceGet(cuDevice, ordinal), "cuDeviceGet");
        device = named(device, cuDevice);
        check(JCudaDriver.cuDevicePrimaryCtxRetain(context, cuDevice), "cuDevicePrimaryCtxRetain");
        contextRetained = true;
        current();
        kernel = new MatVecKernel(device);
        kernel.load();
        long aBytes = (long) rows * cols * Float.BYTES;
        check(JCudaDriver.cuMemAlloc(deviceMatrix, aBytes), "cuMemAlloc(matrix, " + aBytes + " bytes)");
        check(JCudaDriver.cuMemcpyHtoD(deviceMatrix, Pointer.to(m.columnMajor()), aBytes), "cuMemcpyHtoD(matrix)");
        for (int s = 0; s < slots; s++) {
            deviceIn[s] = deviceAlloc(inputBytes(), "slot " + s + " in");
            deviceOut[s] = deviceAlloc(outputBytes(), "slot " + s + " out");
            CUstream stream = new CUstream();
            // Non-blocking: no implicit synchronisation with the legacy default stream.
            check(JCudaDriver.cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate");
            streams[s] = stream;
            CUevent event = new CUevent();
            check(JCudaDriver.cuEventCreate(event, CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate");
            done[s] = event;
            params[s] = new MatVecKernel.Params(deviceMatrix, deviceIn[s], deviceOut[s], rows, cols);
        }
        host = HostBuffers.allocate(slots, inputBytes(), outputBytes(), pinned, device, LOG::warn);
    }

    private CUdeviceptr deviceAlloc(long bytes, String what) {
        CUdeviceptr p = new CUdeviceptr();
        check(JCudaDriver.cuMemAlloc(p, bytes), "cuMemAlloc(" + what + ", " + bytes + " bytes)");
        return p;
    }

    private long inputBytes() {
        return (long) batchSize * cols * Float.BYTES;
    }

    private long outputBytes() {
        return (long) batchSize * rows * Float.BYTES;
    }

    @Override
    public int slots() {
        return slots;
    }

    @Override
    public int batchSize() {
        return batchSize;
    }

    @Override
    public int inputRecordBytes() {
        return cols * Float.BYTES;
    }

    @Override
    public int outputRecordBytes() {
        return rows * Float.BYTES;
    }

    @Override
    public ByteBuffer input(int slot) {
        checkUsable(slot);
        return host.input(slot);
    }

    @Override
    public ByteBuffer output(int slot) {
        checkUsable(slot);
        return host.output(slot);
    }

    /** Whether the host buffers are page-locked (else pageable, and {@link #describe} says why). */
    public boolean pinned() {
        return host != null && host.pinned();
    }

    @Override
    public void start(int slot, int records) {
        checkUsable(slot);
        if (records < 0 || records > batchSize) {
            throw new IllegalArgumentException("records must be 0 to " + batchSize + " (batchSize), not " + records);
        }
        if (inFlight[slot] > 0) {
            throw new IllegalStateException("slot " + slot + " is still in flight: finish(" + slot + ") before starting it again");
        }
        if (records == 0) {
            return;
        }
        current();
        CUstream stream = streams[slot];
        check(
                JCudaDriver.cuMemcpyHtoDAsync(deviceIn[slot], host.inputPointer(slot), (long) records * inputRecordBytes(), stream),
                "cuMemcpyHtoDAsync(slot " + slot + ", " + records + " vectors)");
        kernel.launch(stream, params[slot], rows, records);
        check(
                JCudaDriver.cuMemcpyDtoHAsync(host.outputPointer(slot), deviceOut[slot], (long) records * outputRecordBytes(), stream),
                "cuMemcpyDtoHAsync(slot " + slot + ", " + records + " products)");
        check(JCudaDriver.cuEventRecord(done[slot], stream), "cuEventRecord(slot " + slot + ")");
        inFlight[slot] = records;
    }

    @Override
    public int finish(int slot) throws InterruptedException {
        checkUsable(slot);
        if (inFlight[slot] == 0) {
            return 0;
        }
        current();
        CUevent event = done[slot];
        int rc = BoundedWait.await(() -> JCudaDriver.cuEventQuery(event), finishTimeoutNanos, System::nanoTime);
        if (rc == CUresult.CUDA_ERROR_NOT_READY) {
            stuck = true;
            throw new IllegalStateException(
                    device + ": the batch of " + inFlight[slot] + " vectors in slot " + slot + " did not finish within "
                            + Duration.ofNanos(finishTimeoutNanos).toSeconds() + " s (cuEventQuery still answers "
                            + CudaCheck.name(rc) + ")");
        }
        int records = inFlight[slot];
        inFlight[slot] = 0;
        if (rc != CUresult.CUDA_SUCCESS) {
            throw new IllegalStateException(
                    device + ": the batch of " + records + " vectors in slot " + slot + " failed: " + CudaCheck.name(rc));
        }
        return records;
    }

    @Override
    public String describe() {
        return "GPU path, asynchronous: the sample's CUDA kernel on " + device + ", " + slots + " slot(s) of "
                + batchSize + " vectors, one CUDA stream per slot, "
                + (host == null ? "no host buffers"
                        : host.pinned() ? "page-locked host buffers (cuMemHostAlloc)"
                                : "pageable host buffers (" + host.pageableReason() + ")");
    }

    private static String named(String device, CUdevice cuDevice) {
        byte[] name = new byte[256];
        if (JCudaDriver.cuDeviceGetName(name, name.length, cuDevice) != CUresult.CUDA_SUCCESS) {
            return device;
        }
        int end = 0;
        while (end < name.length && name[end] != 0) {
            end++;
        }
        return device + " (" + new String(name, 0, end, StandardCharsets.US_ASCII) + ")";
    }

    /**
     * Frees device memory, streams, events, host buffers and the context reference, once. A batch
     * still in flight is waited for (bounded); when one never finished, its memory is left
     * allocated rather than freed under the device's feet, and the log says so.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (!contextRetained) {
            // Nothing of CUDA's was allocated: everything is, after the context.
            return;
        }
        try {
            JCudaDriver.cuCtxSetCurrent(context);
            drain();
            if (stuck) {
                LOG.warn("{}: a batch never finished; its device and host memory stay allocated until the process ends", device);
                return;
            }
            for (int s = 0; s < slots; s++) {
                if (done[s] != null) {
                    JCudaDriver.cuEventDestroy(done[s]);
                }
                if (streams[s] != null) {
                    JCudaDriver.cuStreamDestroy(streams[s]);
                }
                freeDevice(deviceIn[s]);
                freeDevice(deviceOut[s]);
            }
            freeDevice(deviceMatrix);
            if (host != null) {
                host.free();
            }
            if (kernel != null) {
                kernel.unload();
            }
            contextRetained = false;
            JCudaDriver.cuDevicePrimaryCtxRelease(cuDevice);
        } catch (RuntimeException | LinkageError e) {
            LOG.warn("{}: releasing the asynchronous GPU path failed: {}", device, e.toString());
        }
    }

    private void drain() {
        for (int s = 0; s < slots && !stuck; s++) {
            if (inFlight[s] > 0) {
                CUevent event = done[s];
                try {
                    if (BoundedWait.await(() -> JCudaDriver.cuEventQuery(event), finishTimeoutNanos, System::nanoTime)
                            == CUresult.CUDA_ERROR_NOT_READY) {
                        stuck = true;
                    }
                } catch (InterruptedException e) {
                    // Cancelled while closing: do not free what the device may still be writing.
                    Thread.currentThread().interrupt();
                    stuck = true;
                }
                inFlight[s] = 0;
            }
        }
    }

    private static void freeDevice(CUdeviceptr p) {
        if (p != null) {
            JCudaDriver.cuMemFree(p);
        }
    }

    private void checkUsable(int slot) {
        if (closed) {
            throw new IllegalStateException(device + ": the asynchronous GPU path is closed");
        }
        if (slot < 0 || slot >= slots) {
            throw new IllegalArgumentException("slot must be 0 to " + (slots - 1) + " (slots = " + slots + "), not " + slot);
        }
    }

    /** The context is current per host thread; the task's thread may not be open()'s. */
    private void current() {
        check(JCudaDriver.cuCtxSetCurrent(context), "cuCtxSetCurrent");
    }

    private void check(int rc, String what) {
        CudaCheck.check(rc, device, what);
    }
}
