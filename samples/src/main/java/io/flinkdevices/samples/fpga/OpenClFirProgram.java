package io.flinkdevices.samples.fpga;

import static org.jocl.CL.CL_DEVICE_TYPE_ALL;
import static org.jocl.CL.CL_MEM_COPY_HOST_PTR;
import static org.jocl.CL.CL_MEM_READ_ONLY;
import static org.jocl.CL.CL_PROGRAM_BUILD_LOG;
import static org.jocl.CL.CL_SUCCESS;

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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The FIR program on one OpenCL device: the device found by platform and device index (both names
 * checked), a context, one in-order command queue, the program built from {@code fir.cl} or loaded
 * from a bitstream, and the taps in device memory. {@link OpenClFir} (one batch at a time) and
 * {@link OpenClFirBatchBackend} (several batches in flight) run their kernels on it.
 *
 * <p><b>Locking.</b> Every OpenCL call on an instance is made holding {@link #lock()}. On
 * oclgrind that is one process-wide lock, which the OpenCL driver plugin (another class loader)
 * takes for its own calls too: oclgrind's runtime keeps its command queues and kernel runs in
 * process-wide state without a lock, so two threads calling it at once corrupt it. On oclgrind
 * every command also blocks ({@link #serialRuntime()}): for a non-blocking command JOCL may start
 * a thread of its own that calls {@code clWaitForEvents} and {@code clReleaseEvent} outside our
 * lock, and that thread and the subtask's next call corrupted oclgrind's heap (SIGSEGV in {@code
 * std::list} under {@code clEnqueueReadBuffer}, {@code malloc(): unaligned fastbin chunk}, within
 * 40 open/run/close cycles in one JVM; never with blocking commands). OpenCL requires its API to
 * be thread-safe, and PoCL and the FPGA vendors' runtimes are: there the lock is per instance
 * and commands are non-blocking.
 *
 * <p>Not thread-safe; one per subtask.
 */
final class OpenClFirProgram implements AutoCloseable {

    /** Name of the kernel in {@code fir.cl} and in a bitstream. */
    static final String KERNEL = "fir";

    /** The kernel's source, a class-path resource next to this class. */
    static final String SOURCE_RESOURCE = "fir.cl";

    /** Work-group size of every launch: one shape, so that the device compiles the kernel once. */
    static final long LOCAL_SIZE = 64;

    private static final Object OCLGRIND_LOCK = ProcessWideLock.of("OpenCL");

    private static final Object BUILD_LOCK = new Object();

    private final String description;
    private final Object lock;
    private final boolean serialRuntime;
    private final int taps;
    private final List<Runnable> releases = new ArrayList<>();
    private cl_device_id device;
    private cl_context context;
    private cl_command_queue queue;
    private cl_program program;
    private cl_mem tapsMem;

    private OpenClFirProgram(String description, int taps, boolean oclgrind) {
        this.description = description;
        this.lock = oclgrind ? OCLGRIND_LOCK : new Object();
        this.serialRuntime = oclgrind;
        this.taps = taps;
    }

    /**
     * Opens the device {@code device} names and builds or loads the program.
     *
     * @param bitstream a device binary ({@code .aocx}, {@code .xclbin}, or whatever the device's
     *     {@code CL_PROGRAM_BINARIES} gives) to load with {@code clCreateProgramWithBinary}, or null
     *     to build {@code fir.cl} from source (emulators, CPU and GPU devices)
     * @throws IllegalStateException naming the device and what failed: no such platform or device,
     *     a name that does not match, a build error with its log, a binary the device rejects, or
     *     an OpenCL library that cannot load
     */
    static OpenClFirProgram open(FpgaInfo device, float[] taps, Path bitstream, String buildOptions) {
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
        OpenClFirProgram p = new OpenClFirProgram(what, taps.length, device.getPlatform().startsWith("Oclgrind"));
        try {
            synchronized (p.lock) {
                p.init(device, taps, bitstream, buildOptions == null ? "" : buildOptions);
            }
            return p;
        } catch (CLException e) {
            p.close();
            throw new IllegalStateException(what + ": " + e.getMessage(), e);
        } catch (LinkageError e) {
            p.close();
            throw new IllegalStateException(
                    what + ": JOCL's native library or the OpenCL loader (libOpenCL.so.1) cannot load: " + e, e);
        } catch (RuntimeException e) {
            p.close();
            throw e;
        }
    }

    private void init(FpgaInfo info, float[] tapValues, Path bitstream, String buildOptions) {
        CL.setExceptionsEnabled(true);
        device = findDevice(info);
        context = CL.clCreateContext(null, 1, new cl_device_id[] {device}, null, null, null);
        cl_context ctx = context;
        releases.add(() -> CL.clReleaseContext(ctx));
        queue = createQueue(context, device);
        cl_command_queue q = queue;
        releases.add(() -> CL.clReleaseCommandQueue(q));
        program = bitstream == null ? fromSource() : fromBinary(bitstream);
        cl_program prog = program;
        releases.add(() -> CL.clReleaseProgram(prog));
        try {
            build(program, device, buildOptions);
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
                            + buildLog(program, device),
                    e);
        }
        // one kernel up front: a program without 'fir' fails here, at open, naming the bitstream
        try {
            CL.clReleaseKernel(CL.clCreateKernel(program, KERNEL, null));
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
        tapsMem = buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (long) taps * Sizeof.cl_float, Pointer.to(tapValues));
    }

    /**
     * A new instance of the kernel with its inputs, the taps and the outputs bound; argument 5, the
     * number of records, is the caller's to set before each launch. Released with the program.
     * Call holding {@link #lock()}.
     */
    cl_kernel kernel(cl_mem in, cl_mem positions, cl_mem out) {
        cl_kernel k = CL.clCreateKernel(program, KERNEL, null);
        releases.add(() -> CL.clReleaseKernel(k));
        CL.clSetKernelArg(k, 0, Sizeof.cl_mem, Pointer.to(in));
        CL.clSetKernelArg(k, 1, Sizeof.cl_mem, Pointer.to(positions));
        CL.clSetKernelArg(k, 2, Sizeof.cl_mem, Pointer.to(tapsMem));
        CL.clSetKernelArg(k, 3, Sizeof.cl_int, Pointer.to(new int[] {taps}));
        CL.clSetKernelArg(k, 4, Sizeof.cl_mem, Pointer.to(out));
        return k;
    }

    /** The work-group size launches of {@code k} use: {@link #LOCAL_SIZE} or the device's maximum. */
    long localSize(cl_kernel k) {
        long[] maxGroup = new long[1];
        CL.clGetKernelWorkGroupInfo(k, device, CL.CL_KERNEL_WORK_GROUP_SIZE, Sizeof.size_t, Pointer.to(maxGroup), null);
        return Math.max(1, Math.min(LOCAL_SIZE, maxGroup[0]));
    }

    /** A device buffer, released with the program. Call holding {@link #lock()}. */
    cl_mem buffer(long flags, long bytes, Pointer host) {
        cl_mem mem = CL.clCreateBuffer(context, flags, bytes, host, null);
        releases.add(() -> CL.clReleaseMemObject(mem));
        return mem;
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
        String platformName = OpenClStrings.platformName(platform);
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
        String deviceName = OpenClStrings.deviceName(dev);
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

    private cl_program fromSource() {
        return CL.clCreateProgramWithSource(context, 1, new String[] {OpenClStrings.kernelSource()}, null, null);
    }

    private cl_program fromBinary(Path bitstream) {
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
                    new cl_device_id[] {device},
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

    private static String buildLog(cl_program program, cl_device_id dev) {
        try {
            long[] size = new long[1];
            CL.clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, 0, null, size);
            byte[] log = new byte[(int) size[0]];
            CL.clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, log.length, Pointer.to(log), null);
            return OpenClStrings.cString(log);
        } catch (CLException e) {
            return "(no build log: " + e.getMessage() + ")";
        }
    }

    /** The device, for messages: {@code OpenCL device #0 'name' of platform #0 'platform'}. */
    String describe() {
        return description;
    }

    /** The lock every OpenCL call on this program, its buffers and kernels is made under. */
    Object lock() {
        return lock;
    }

    /** True on a runtime that is not thread-safe (oclgrind): every command blocks. */
    boolean serialRuntime() {
        return serialRuntime;
    }

    cl_command_queue queue() {
        return queue;
    }

    int taps() {
        return taps;
    }

    /**
     * An exception for a failed OpenCL call, naming the device, what was being done and the OpenCL
     * error name (for example {@code CL_OUT_OF_RESOURCES}).
     */
    IllegalStateException failure(String doing, CLException e) {
        return new IllegalStateException(description + ": " + doing + " failed with " + CL.stringFor_errorCode(e.getStatus()), e);
    }

    /** Releases the kernels, buffers, program, queue and context; safe to call twice. */
    @Override
    public void close() {
        synchronized (lock) {
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
}
