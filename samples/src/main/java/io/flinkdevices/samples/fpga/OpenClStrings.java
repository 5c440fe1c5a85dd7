package io.flinkdevices.samples.fpga;

import static org.jocl.CL.CL_DEVICE_NAME;
import static org.jocl.CL.CL_PLATFORM_NAME;

import org.jocl.CL;
import org.jocl.Pointer;
import org.jocl.cl_device_id;
import org.jocl.cl_platform_id;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/** Strings the FIR sample reads from OpenCL (platform and device names) and the kernel's source. */
final class OpenClStrings {

    private OpenClStrings() {}

    /** The OpenCL C source of the FIR kernel, {@code fir.cl} next to this class. */
    static String kernelSource() {
        try (InputStream in = OpenClStrings.class.getResourceAsStream(OpenClFirProgram.SOURCE_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(
                        "class-path resource " + OpenClStrings.class.getPackageName().replace('.', '/') + "/" + OpenClFirProgram.SOURCE_RESOURCE + " is missing");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + OpenClFirProgram.SOURCE_RESOURCE + ": " + e, e);
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

    static String cString(byte[] b) {
        int n = 0;
        while (n < b.length && b[n] != 0) {
            n++;
        }
        return new String(b, 0, n, StandardCharsets.UTF_8).trim();
    }
}
