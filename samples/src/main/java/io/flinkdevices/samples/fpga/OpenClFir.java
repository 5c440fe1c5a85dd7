package io.flinkdevices.samples.fpga;

import static org.jocl.CL.CL_DEVICE_NAME;
import static org.jocl.CL.CL_DEVICE_TYPE_ALL;
import static org.jocl.CL.CL_MEM_COPY_HOST_PTR;
import static org.jocl.CL.CL_MEM_READ_ONLY;
import static org.jocl.CL.CL_MEM_WRITE_ONLY;
import static org.jocl.CL.CL_PLATFORM_NAME;
import static org.jocl.CL.CL_PROGRAM_BUILD_LOG;
import static org.jocl.CL.CL_SUCCESS;
import static org.jocl.CL.CL_TRUE;

import io.flinkdevices.sdk.info.FpgaInfo;
import io.flinkdevices.sdk.nativelib.ProcessWideLock;

import org.jocl.CL;
import org.jocl.CLException;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_command_queue;
import org.jocl.cl_context;
import org.jocl.cl_device_id;
import org.jocl.cl_kernel;
import org.jocl.cl_mem;
import org.jocl.cl_platform_id;
import org.jocl.cl_program;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The FIR kernel on one OpenCL device: the host-side batch buffers (direct, native byte order)
 * and one kernel run per batch.
 *
 * <p>The caller fills {@link #input()} (one segment per sensor: {@code taps - 1} history samples,
 * then the batch's samples) and {@link #positions()} (index in the input of each record's
 * sample), calls {@link #run(int, int)}, and reads {@link #output()} (one filtered sample per
 * record, in record order). A run is two writes, one kernel and one blocking read: one wait per
 * batch.
 *
 * <p>On oclgrind the writes block too, on purpose: for a non-blocking write JOCL starts a task on
 * a thread of its own that calls {@code clWaitForEvents} and {@code clReleaseEvent} for the
 * command, outside any lock of ours. OpenCL requires its API to be thread-safe and PoCL and the
 * FPGA vendors' runtimes are; oclgrind is not (its queues live in process-wide maps without a
 * lock), and that thread and the subtask's next call corrupted its heap (SIGSEGV in {@code
 * std::list} under {@code clEnqueueReadBuffer}, {@code malloc(): unaligned fastbin chunk}, within
 * 40 open/run/close cycles in one JVM; never with blocking writes). Elsewhere the writes stay
 * non-blocking: a wait per write costs PoCL about half its kernel throughput at 4096 samples per
 * batch.
 *
 * <p>Not thread-safe; one per subtask.
 */
final class OpenClFir implements AutoCloseable {

    /** Name of the kernel in {@code fir.cl} and in a bitstream. */
    static final String KERNEL = "fir";

    /** The kernel's source, a class-path resource next to this class. */
    static final String SOURCE_RESOURCE = "fir.cl";

    /**
     * Oclgrind's runtime keeps its command queues and kernel runs in process-wide state without a
     * lock: two threads calling it at once corrupt it. Every call to an oclgrind device goes
     * through this one lock, which the OpenCL driver plugin (another class loader) takes for its
     * own calls too; other platforms use a lock per instance.
     */
    private static final Object OCLGRIND_LOCK = ProcessWideLock.of("OpenCL");

    private static final Object BUILD_LOCK = new Object();

    private final String description;
    private final Object lock;
    /** Whether writes block: on runtimes that are not thread-safe (see the class comment). */
    private final boolean blockingWrites;
    private final int taps;
    private final int maxRecords;
    private final int maxInput;
    private final FloatBuffer input;
    private final IntBuffer positions;
    private final FloatBuffer output;
    private final Pointer inputPtr;
    private final Pointer positionsPtr;
    private final Pointer outputPtr;
    private final List<Runnable> releases = new ArrayList<>();
    private cl_context context;
    private cl_command_queue queue;
    private cl_kernel kernel;
    private cl_mem inMem;
    private cl_mem posMem;
    private cl_mem outMem;
    /** Work-group size of every launch: one shape, so that the device compiles the kernel once. */
    static final long LOCAL_SIZE = 64;

    private final long[] globalSize = new long[1];
    private final long[] localSize = new long[1];
    private final int[] nArg = new int[1];
    private final Pointer nArgPtr = Pointer.to(nArg);

    private OpenClFir(String description, int taps, int maxRecords, boolean oclgrind) {
        this.description = description;
        this.lock = oclgrind ? OCLGRIND_LOCK : new Object();
        this.blockingWrites = oclgrind;
        this.taps = taps;
        this.maxRecords = maxRecords;
        this.maxInput = Math.multiplyExact(maxRecords, taps);
        this.input = direct(maxInput).asFloatBuffer();
        this.positions = direct(maxRecords).asIntBuffer();
        this.output = direct(maxRecords).asFloatBuffer();
        this.inputPtr = Pointer.to(input);
        this.positionsPtr = Pointer.to(positions);
        this.outputPtr = Pointer.to(output);
    }

    private static ByteBuffer direct(int floats) {
        return ByteBuffer.allocateDirect(Math.multiplyExact(floats, 4)).order(ByteOrder.nativeOrder());
    }

    /**
     * Opens the device {@code device} names (by platform and device index, then checks both names),
     * builds or loads the program, and allocates buffers for batches of up to {@code maxRecords}.
     *
     * @param bitstream a device binary ({@code .aocx}, {@code .xclbin}, or whatever the device's
     *     {@code CL_PROGRAM_BINARIES} gives) to load with {@code clCreateProgramWithBinary}, or null
     *     to build {@code fir.cl} from source (emulators, CPU and GPU devices)
     * @throws IllegalStateException naming the device and what failed: no such platform or device,
     *     a name that does not match, a build error with its log, a binary the device rejects, or
     *     an OpenCL library that cannot load
     */
    static OpenClFir open(FpgaInfo device, float[] taps, int maxRecords, Path bitstream, String buildOptions) {
        String what =
                "OpenCL device #"
                        + device.getDeviceIndex()
                        + " '"
                        + device.getDeviceName()
                        + "' of platform #"
                        + device.getPlatformIndex()
                        + " '"
                        + device.getPlatform()
                        + "'";
        OpenClFir fir = new OpenClFir(what, taps.length, maxRecords, device.getPlatform().startsWith("Oclgrind"));
        try {
            synchronized (fir.lock) {
                fir.init(device, taps, bitstream, buildOptions == null ? "" : buildOptions);
            }
            fir.warmUp();
            return fir;
        } catch (CLException e) {
            fir.close();
            throw new IllegalStateException(what + ": " + e.getMessage(), e);
        } catch (LinkageError e) {
            fir.close();
            throw new IllegalStateException(
                    what + ": JOCL's native library or the OpenCL loader (libOpenCL.so.1) cannot load: " + e, e);
        } catch (RuntimeException e) {
            fir.close();
            throw e;
        }
    }

    private void init(FpgaInfo device, float[] tapValues, Path bitstream, String buildOptions) {
        CL.setExceptionsEnabled(true);
        cl_device_id dev = findDevice(device);
        context = CL.clCreateContext(null, 1, new cl_device_id[] {dev}, null, null, null);
        cl_context ctx = context;
        releases.add(() -> CL.clReleaseContext(ctx));
        queue = createQueue(context, dev);
        cl_command_queue q = queue;
        releases.add(() -> CL.clReleaseCommandQueue(q));
        cl_program program = bitstream == null ? fromSource(dev) : fromBinary(dev, bitstream);
        releases.add(() -> CL.clReleaseProgram(program));
        try {
            build(program, dev, buildOptions);
        } catch (CLException e) {
            throw new IllegalStateException(
                    description
                            + ": "
                            + (bitstream == null ? "building " + SOURCE_RESOURCE : "loading bitstream " + bitstream)
                            + " failed ("
                            + e.getMessage()
                            + ")"
                            + (bitstream == null
                                    ? "; an FPGA board cannot build kernels from source: give the job a bitstream"
                                    : "")
                            + "\nbuild log:\n"
                            + buildLog(program, dev),
                    e);
        }
        try {
            kernel = CL.clCreateKernel(program, KERNEL, null);
        } catch (CLException e) {
            throw new IllegalStateException(
                    description
                            + ": "
                            + (bitstream == null ? SOURCE_RESOURCE : "bitstream " + bitstream)
                            + " has no kernel '"
                            + KERNEL
                            + "' ("
                            + e.getMessage()
                            + ")",
                    e);
        }
        cl_kernel k = kernel;
        releases.add(() -> CL.clReleaseKernel(k));
        cl_mem tapsMem =
                buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (long) taps * Sizeof.cl_float, Pointer.to(tapValues));
        inMem = buffer(CL_MEM_READ_ONLY, (long) maxInput * Sizeof.cl_float, null);
        posMem = buffer(CL_MEM_READ_ONLY, (long) maxRecords * Sizeof.cl_int, null);
        outMem = buffer(CL_MEM_WRITE_ONLY, (long) maxRecords * Sizeof.cl_float, null);
        CL.clSetKernelArg(kernel, 0, Sizeof.cl_mem, Pointer.to(inMem));
        CL.clSetKernelArg(kernel, 1, Sizeof.cl_mem, Pointer.to(posMem));
        CL.clSetKernelArg(kernel, 2, Sizeof.cl_mem, Pointer.to(tapsMem));
        CL.clSetKernelArg(kernel, 3, Sizeof.cl_int, Pointer.to(new int[] {taps}));
        CL.clSetKernelArg(kernel, 4, Sizeof.cl_mem, Pointer.to(outMem));
        long[] maxGroup = new long[1];
        CL.clGetKernelWorkGroupInfo(kernel, dev, CL.CL_KERNEL_WORK_GROUP_SIZE, Sizeof.size_t, Pointer.to(maxGroup), null);
        localSize[0] = Math.max(1, Math.min(LOCAL_SIZE, maxGroup[0]));
    }

    /**
     * One full-size run on zeros, so that a device that compiles a work-group function at the
     * first launch (PoCL does, per work-group size) does it here and not inside the first batch.
     */
    private void warmUp() {
        int h = taps - 1;
        for (int i = 0; i <= h; i++) {
            input.put(i, 0f);
        }
        for (int i = 0; i < maxRecords; i++) {
            positions.put(i, h);
        }
        run(maxRecords, h + 1);
    }

    /**
     * Builds one program at a time in this JVM, and tries a failed build once more: PoCL's kernel
     * cache ({@code ~/.cache/pocl/kcache}, or {@code POCL_CACHE_DIR}) loses temporary files when
     * builds of the same source race, within a process or between processes on one host.
     */
    private static void build(cl_program program, cl_device_id dev, String options) {
        synchronized (BUILD_LOCK) {
            try {
                CL.clBuildProgram(program, 1, new cl_device_id[] {dev}, options, null, null);
            } catch (CLException first) {
                CL.clBuildProgram(program, 1, new cl_device_id[] {dev}, options, null, null);
            }
        }
    }

    @SuppressWarnings("deprecation")
    private static cl_command_queue createQueue(cl_context context, cl_device_id dev) {
        // the OpenCL 1.2 call: oclgrind and many FPGA runtimes stop at 1.2
        return CL.clCreateCommandQueue(context, dev, 0, null);
    }

    private cl_mem buffer(long flags, long bytes, Pointer host) {
        cl_mem mem = CL.clCreateBuffer(context, flags, bytes, host, null);
        releases.add(() -> CL.clReleaseMemObject(mem));
        return mem;
    }

    private cl_device_id findDevice(FpgaInfo device) {
        int[] count = new int[1];
        try {
            CL.clGetPlatformIDs(0, null, count);
        } catch (CLException e) {
            // the ICD loader reports CL_PLATFORM_NOT_FOUND_KHR when no vendor is registered
            count[0] = 0;
        }
        if (device.getPlatformIndex() >= count[0]) {
            throw new IllegalStateException(
                    description
                            + ": this process sees "
                            + count[0]
                            + " OpenCL platform(s), so platform #"
                            + device.getPlatformIndex()
                            + " does not exist (the TaskManager's OpenCL loader and OCL_ICD_VENDORS decide what is visible)");
        }
        cl_platform_id[] platforms = new cl_platform_id[count[0]];
        CL.clGetPlatformIDs(count[0], platforms, null);
        cl_platform_id platform = platforms[device.getPlatformIndex()];
        String platformName = platformName(platform);
        if (!platformName.equals(device.getPlatform())) {
            throw new IllegalStateException(
                    description
                            + ": platform #"
                            + device.getPlatformIndex()
                            + " of this process is '"
                            + platformName
                            + "', not '"
                            + device.getPlatform()
                            + "'; the job and the driver see different OpenCL platforms");
        }
        int[] devices = new int[1];
        CL.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, null, devices);
        if (device.getDeviceIndex() >= devices[0]) {
            throw new IllegalStateException(
                    description + ": platform '" + platformName + "' has " + devices[0] + " device(s) only");
        }
        cl_device_id[] ids = new cl_device_id[devices[0]];
        CL.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, devices[0], ids, null);
        cl_device_id dev = ids[device.getDeviceIndex()];
        String deviceName = deviceName(dev);
        if (!deviceName.equals(device.getDeviceName())) {
            throw new IllegalStateException(
                    description
                            + ": device #"
                            + device.getDeviceIndex()
                            + " of platform '"
                            + platformName
                            + "' is '"
                            + deviceName
                            + "', not '"
                            + device.getDeviceName()
                            + "'; the job and the driver see different OpenCL devices");
        }
        return dev;
    }

    private cl_program fromSource(cl_device_id dev) {
        return CL.clCreateProgramWithSource(context, 1, new String[] {kernelSource()}, null, null);
    }

    private cl_program fromBinary(cl_device_id dev, Path bitstream) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(bitstream);
        } catch (IOException e) {
            throw new IllegalStateException(
                    description + ": cannot read bitstream " + bitstream.toAbsolutePath() + ": " + e, e);
        }
        int[] binaryStatus = new int[1];
        int[] error = new int[1];
        try {
            return CL.clCreateProgramWithBinary(
                    context,
                    1,
                    new cl_device_id[] {dev},
                    new long[] {bytes.length},
                    new byte[][] {bytes},
                    binaryStatus,
                    error);
        } catch (CLException e) {
            throw new IllegalStateException(
                    description
                            + " rejects bitstream "
                            + bitstream.toAbsolutePath()
                            + " ("
                            + bytes.length
                            + " bytes): "
                            + e.getMessage()
                            + (binaryStatus[0] != CL_SUCCESS ? ", binary status " + CL.stringFor_errorCode(binaryStatus[0]) : "")
                            + "; it must be a binary built for this device (.aocx for Intel FPGAs, .xclbin for AMD/Xilinx)"
                            + " holding a kernel named '"
                            + KERNEL
                            + "'",
                    e);
        }
    }

    static String kernelSource() {
        try (InputStream in = OpenClFir.class.getResourceAsStream(SOURCE_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(
                        "class-path resource " + OpenClFir.class.getPackageName().replace('.', '/') + "/" + SOURCE_RESOURCE + " is missing");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + SOURCE_RESOURCE + ": " + e, e);
        }
    }

    private static String buildLog(cl_program program, cl_device_id dev) {
        try {
            long[] size = new long[1];
            CL.clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, 0, null, size);
            byte[] log = new byte[(int) size[0]];
            CL.clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, log.length, Pointer.to(log), null);
            return cString(log);
        } catch (CLException e) {
            return "(no build log: " + e.getMessage() + ")";
        }
    }

    static String platformName(cl_platform_id platform) {
        long[] size = new long[1];
        CL.clGetPlatformInfo(platform, CL_PLATFORM_NAME, 0, null, size);
        byte[] b = new byte[(int) size[0]];
        CL.clGetPlatformInfo(platform, CL_PLATFORM_NAME, b.length, Pointer.to(b), null);
        return cString(b);
    }

    static String deviceName(cl_device_id device) {
        long[] size = new long[1];
        CL.clGetDeviceInfo(device, CL_DEVICE_NAME, 0, null, size);
        byte[] b = new byte[(int) size[0]];
        CL.clGetDeviceInfo(device, CL_DEVICE_NAME, b.length, Pointer.to(b), null);
        return cString(b);
    }

    private static String cString(byte[] b) {
        int n = 0;
        while (n < b.length && b[n] != 0) {
            n++;
        }
        return new String(b, 0, n, StandardCharsets.UTF_8).trim();
    }

    /** Samples in: one segment per sensor, history first. Holds up to {@code maxRecords * taps}. */
    FloatBuffer input() {
        return input;
    }

    /** For each record, the index of its sample in {@link #input()}. */
    IntBuffer positions() {
        return positions;
    }

    /** For each record, its filtered sample, after {@link #run}. */
    FloatBuffer output() {
        return output;
    }

    int maxRecords() {
        return maxRecords;
    }

    int taps() {
        return taps;
    }

    String describe() {
        return description;
    }

    /**
     * Filters one batch: writes the first {@code inputLength} input samples and {@code records}
     * positions, runs the kernel over {@code records} work items, and reads {@code records}
     * outputs back, waiting once.
     */
    void run(int records, int inputLength) {
        if (records <= 0) {
            return;
        }
        synchronized (lock) {
            enqueue(records, inputLength);
        }
    }

    private void enqueue(int records, int inputLength) {
        if (records > maxRecords || inputLength > maxInput) {
            throw new IllegalArgumentException(
                    records + " records / " + inputLength + " samples exceed the buffers (" + maxRecords + " / " + maxInput + ")");
        }
        // blocking on oclgrind: no JOCL thread may call it behind our lock (see the class comment)
        CL.clEnqueueWriteBuffer(queue, inMem, blockingWrites, 0, (long) inputLength * Sizeof.cl_float, inputPtr, 0, null, null);
        CL.clEnqueueWriteBuffer(queue, posMem, blockingWrites, 0, (long) records * Sizeof.cl_int, positionsPtr, 0, null, null);
        nArg[0] = records;
        CL.clSetKernelArg(kernel, 5, Sizeof.cl_int, nArgPtr);
        // padded to whole work groups; the kernel skips work items >= n
        globalSize[0] = (records + localSize[0] - 1) / localSize[0] * localSize[0];
        CL.clEnqueueNDRangeKernel(queue, kernel, 1, null, globalSize, localSize, 0, null, null);
        CL.clEnqueueReadBuffer(queue, outMem, CL_TRUE, 0, (long) records * Sizeof.cl_float, outputPtr, 0, null, null);
    }

    @Override
    public void close() {
        synchronized (lock) {
            release();
        }
    }

    private void release() {
        RuntimeException first = null;
        for (int i = releases.size() - 1; i >= 0; i--) {
            try {
                releases.get(i).run();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        releases.clear();
        if (first != null) {
            throw first;
        }
    }
}
