package io.flinkdevices.fpga;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.nativelib.NativeGuard;
import io.flinkdevices.sdk.nativelib.PrivateNativeLibraries;
import io.flinkdevices.sdk.nativelib.ProcessWideLock;

import org.jocl.CL;
import org.jocl.Pointer;
import org.jocl.cl_context;
import org.jocl.cl_device_id;
import org.jocl.cl_platform_id;
import org.jocl.cl_program;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * OpenCL through JOCL. JOCL's native library is loaded on first use, into a folder private to this
 * class loader (see {@link PrivateNativeLibraries}), so that a job's own JOCL in the same
 * TaskManager still loads. Every call goes through {@link NativeGuard}: a host without an OpenCL
 * ICD loader gives a {@link DeviceDriverException}, never an {@code Error}. Calls are serialized
 * under {@code ProcessWideLock.of("OpenCL")}, which job code in other class loaders shares: some
 * OpenCL implementations (simulators, FPGA runtimes) are not safe to call concurrently.
 */
final class JoclOpenCl implements OpenCl {

    static final String LIBRARY =
            "libOpenCL.so.1 (the OpenCL ICD loader, through JOCL's libJOCL_2_0_6)";
    static final String HINT =
            "install an OpenCL ICD loader (Debian/Ubuntu: ocl-icd-libopencl1) and the vendor's"
                    + " OpenCL runtime (Intel FPGA SDK/oneAPI runtime, Xilinx XRT) on the"
                    + " TaskManager host";

    /** {@code CL_PLATFORM_NOT_FOUND_KHR}: the ICD loader found no platform. */
    static final int PLATFORM_NOT_FOUND = -1001;

    /** How much of a failed build's log an error message carries. */
    static final int LOG_TAIL_LINES = 20;
    static final int LOG_TAIL_CHARS = 2000;

    private static final Logger LOG = LoggerFactory.getLogger(JoclOpenCl.class);

    /**
     * One lock for every OpenCL call of this driver and of job code that runs on a runtime which
     * is not thread-safe (oclgrind, many FPGA runtimes), in whatever class loader: the driver
     * (plugin class loader) and a job (user-code class loader) reach the same native runtime.
     */
    private static final Object LOCK = ProcessWideLock.of("OpenCL");

    @Override
    public String describe() {
        return "OpenCL (through JOCL)";
    }

    @Override
    public List<ClPlatform> platforms() throws DeviceDriverException {
        return NativeGuard.call(LIBRARY, HINT, () -> {
            synchronized (LOCK) {
                load();
                return query();
            }
        });
    }

    @Override
    public Optional<String> tryProgram(ClDevice device, ProgramFile program)
            throws DeviceDriverException {
        // read before the process-wide lock, which is held around runtime calls only: a slow
        // file (a network mount) must not hold up the job code waiting for that lock
        String text = null;
        byte[] bytes = null;
        try {
            if (program.source) {
                text = program.text();
            } else {
                bytes = program.bytes();
            }
        } catch (IOException e) {
            return Optional.of("cannot read " + program + ": " + e.getMessage());
        }
        if (bytes != null && bytes.length == 0) {
            return Optional.of("the program binary is empty");
        }
        String source = text;
        byte[] binary = bytes;
        return NativeGuard.call(LIBRARY, HINT, () -> {
            synchronized (LOCK) {
                load();
                return build((cl_device_id) device.handle, source, binary, program.buildOptions);
            }
        });
    }

    @Override
    public boolean available(ClDevice device) throws DeviceDriverException {
        return NativeGuard.call(LIBRARY, HINT, () -> {
            synchronized (LOCK) {
                load();
                return deviceInt((cl_device_id) device.handle, CL.CL_DEVICE_AVAILABLE) != 0;
            }
        });
    }

    private static void load() throws ClassNotFoundException {
        PrivateNativeLibraries.initialize(
                "org.jocl.CL", JoclOpenCl.class.getClassLoader(), "flink-devices-jocl-");
        CL.setExceptionsEnabled(false);
    }

    private static List<ClPlatform> query() throws DeviceDriverException {
        int[] count = new int[1];
        int result = CL.clGetPlatformIDs(0, null, count);
        if (result == PLATFORM_NOT_FOUND || (result == CL.CL_SUCCESS && count[0] == 0)) {
            return List.of();
        }
        check(result, "clGetPlatformIDs");
        cl_platform_id[] ids = new cl_platform_id[count[0]];
        check(CL.clGetPlatformIDs(ids.length, ids, null), "clGetPlatformIDs");
        List<ClPlatform> platforms = new ArrayList<>();
        for (int p = 0; p < ids.length; p++) {
            String name = platformString(ids[p], CL.CL_PLATFORM_NAME);
            String vendor = platformString(ids[p], CL.CL_PLATFORM_VENDOR);
            List<ClDevice> devices;
            try {
                devices = devices(ids[p], p, name);
            } catch (DeviceDriverException e) {
                // one broken vendor runtime (say a GPU ICD without its driver) must not hide the
                // FPGA platform next to it
                LOG.warn("OpenCL platform {} '{}' lists no devices: {}", p, name, e.getMessage());
                devices = List.of();
            }
            platforms.add(new ClPlatform(p, name, vendor, devices));
        }
        return platforms;
    }

    private static List<ClDevice> devices(cl_platform_id platform, int p, String platformName)
            throws DeviceDriverException {
        int[] count = new int[1];
        int result = CL.clGetDeviceIDs(platform, CL.CL_DEVICE_TYPE_ALL, 0, null, count);
        if (result == CL.CL_DEVICE_NOT_FOUND) {
            return List.of();
        }
        check(result, "clGetDeviceIDs on platform " + p + " '" + platformName + "'");
        cl_device_id[] ids = new cl_device_id[count[0]];
        check(CL.clGetDeviceIDs(platform, CL.CL_DEVICE_TYPE_ALL, ids.length, ids, null),
                "clGetDeviceIDs on platform " + p + " '" + platformName + "'");
        List<ClDevice> devices = new ArrayList<>();
        for (int d = 0; d < ids.length; d++) {
            devices.add(
                    new ClDevice(
                            platformName,
                            p,
                            d,
                            deviceString(ids[d], CL.CL_DEVICE_NAME),
                            deviceString(ids[d], CL.CL_DEVICE_VENDOR),
                            deviceLong(ids[d], CL.CL_DEVICE_TYPE),
                            deviceLong(ids[d], CL.CL_DEVICE_GLOBAL_MEM_SIZE),
                            deviceInt(ids[d], CL.CL_DEVICE_MAX_COMPUTE_UNITS),
                            ids[d]));
        }
        return devices;
    }

    /** Builds {@code source} (OpenCL C) or else {@code bytes} (a binary) for {@code device}. */
    private static Optional<String> build(cl_device_id device, String source, byte[] bytes, String buildOptions)
            throws DeviceDriverException {
        cl_device_id[] devices = {device};
        int[] error = new int[1];
        cl_context context = CL.clCreateContext(null, 1, devices, null, null, error);
        check(error[0], "clCreateContext");
        cl_program created = null;
        try {
            if (source != null) {
                created = CL.clCreateProgramWithSource(context, 1, new String[] {source}, null, error);
                if (error[0] != CL.CL_SUCCESS) {
                    return Optional.of("clCreateProgramWithSource failed: " + CL.stringFor_errorCode(error[0]));
                }
            } else {
                int[] status = new int[1];
                created = CL.clCreateProgramWithBinary(
                        context, 1, devices, new long[] {bytes.length}, new byte[][] {bytes}, status, error);
                if (error[0] != CL.CL_SUCCESS) {
                    return Optional.of("clCreateProgramWithBinary failed: " + CL.stringFor_errorCode(error[0])
                            + (status[0] != CL.CL_SUCCESS ? " (binary status " + CL.stringFor_errorCode(status[0]) + ")" : "")
                            + "; is it built for this device's board and shell?");
                }
            }
            int result = CL.clBuildProgram(created, 1, devices, buildOptions, null, null);
            if (result != CL.CL_SUCCESS) {
                return Optional.of("clBuildProgram failed: " + CL.stringFor_errorCode(result)
                        + (buildOptions.isEmpty() ? "" : " (build options '" + buildOptions + "')")
                        + buildLogTail(created, device));
            }
            return Optional.empty();
        } finally {
            if (created != null) {
                CL.clReleaseProgram(created);
            }
            CL.clReleaseContext(context);
        }
    }

    private static String buildLogTail(cl_program program, cl_device_id device) {
        long[] size = new long[1];
        if (CL.clGetProgramBuildInfo(program, device, CL.CL_PROGRAM_BUILD_LOG, 0, null, size) != CL.CL_SUCCESS
                || size[0] <= 1) {
            return "; no build log";
        }
        byte[] log = new byte[(int) Math.min(size[0], 1 << 20)];
        if (CL.clGetProgramBuildInfo(program, device, CL.CL_PROGRAM_BUILD_LOG, log.length, Pointer.to(log), null)
                != CL.CL_SUCCESS) {
            return "; no build log";
        }
        return "; build log (tail):\n" + tail(cString(log));
    }

    /** The last {@value #LOG_TAIL_LINES} lines, at most {@value #LOG_TAIL_CHARS} characters. */
    static String tail(String log) {
        String[] lines = log.strip().split("\\R");
        int from = Math.max(0, lines.length - LOG_TAIL_LINES);
        String t = String.join("\n", java.util.Arrays.asList(lines).subList(from, lines.length));
        return t.length() > LOG_TAIL_CHARS ? "..." + t.substring(t.length() - LOG_TAIL_CHARS) : t;
    }

    private static String platformString(cl_platform_id platform, int param) throws DeviceDriverException {
        long[] size = new long[1];
        check(CL.clGetPlatformInfo(platform, param, 0, null, size), "clGetPlatformInfo");
        byte[] b = new byte[(int) Math.min(Math.max(size[0], 1), 1 << 16)];
        check(CL.clGetPlatformInfo(platform, param, b.length, Pointer.to(b), null), "clGetPlatformInfo");
        return cString(b);
    }

    private static String deviceString(cl_device_id device, int param) throws DeviceDriverException {
        long[] size = new long[1];
        check(CL.clGetDeviceInfo(device, param, 0, null, size), "clGetDeviceInfo");
        byte[] b = new byte[(int) Math.min(Math.max(size[0], 1), 1 << 16)];
        check(CL.clGetDeviceInfo(device, param, b.length, Pointer.to(b), null), "clGetDeviceInfo");
        return cString(b);
    }

    private static long deviceLong(cl_device_id device, int param) throws DeviceDriverException {
        long[] v = new long[1];
        check(CL.clGetDeviceInfo(device, param, Long.BYTES, Pointer.to(v), null), "clGetDeviceInfo");
        return v[0];
    }

    private static long deviceInt(cl_device_id device, int param) throws DeviceDriverException {
        int[] v = new int[1];
        check(CL.clGetDeviceInfo(device, param, Integer.BYTES, Pointer.to(v), null), "clGetDeviceInfo");
        return Integer.toUnsignedLong(v[0]);
    }

    private static void check(int result, String call) throws DeviceDriverException {
        if (result != CL.CL_SUCCESS) {
            throw new DeviceDriverException("OpenCL " + call + " failed: " + CL.stringFor_errorCode(result));
        }
    }

    private static String cString(byte[] b) {
        int n = 0;
        while (n < b.length && b[n] != 0) {
            n++;
        }
        return new String(b, 0, n, StandardCharsets.UTF_8).strip();
    }
}
