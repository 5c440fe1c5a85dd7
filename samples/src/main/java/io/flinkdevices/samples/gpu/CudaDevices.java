package io.flinkdevices.samples.gpu;

import io.flinkdevices.sdk.info.GpuInfo;

import jcuda.runtime.JCuda;
import jcuda.runtime.cudaDeviceProp;

import java.util.Locale;

/**
 * Finds the CUDA device a subtask's {@link GpuInfo} names, for both GPU paths. CUDA numbers only
 * the devices this process sees (after {@code CUDA_VISIBLE_DEVICES}), so the driver's index is the
 * last resort: the UUID first, then the PCI address. Runtime-API ordinals are the driver API's too.
 */
final class CudaDevices {

    private CudaDevices() {}

    /** A CUDA ordinal with how it was matched, or why there is none. */
    static final class Found {
        final int ordinal;
        /** Device name and how it was matched, for the log. */
        final String description;
        /** Why no device matched; null when one did. */
        final String reason;

        private Found(int ordinal, String description, String reason) {
            this.ordinal = ordinal;
            this.description = description;
            this.reason = reason;
        }
    }

    /** Matches {@code gpu} among the devices CUDA sees and makes it current on this thread. */
    static Found find(GpuInfo gpu) {
        int[] count = new int[1];
        int rc = JCuda.cudaGetDeviceCount(count);
        if (rc != 0) {
            return new Found(-1, null, "CUDA reports no usable device: cudaGetDeviceCount returned " + error(rc));
        }
        String[] how = new String[1];
        int index = ordinal(gpu, count[0], how);
        if (index < 0) {
            return new Found(
                    -1,
                    null,
                    MatVecBackends.describe(gpu)
                            + " is not among the "
                            + count[0]
                            + " devices CUDA sees in this process (CUDA_VISIBLE_DEVICES="
                            + System.getenv().getOrDefault("CUDA_VISIBLE_DEVICES", "<unset>")
                            + ")");
        }
        check(JCuda.cudaSetDevice(index), "cudaSetDevice(" + index + ")");
        cudaDeviceProp prop = new cudaDeviceProp();
        check(JCuda.cudaGetDeviceProperties(prop, index), "cudaGetDeviceProperties");
        return new Found(index, prop.getName() + ", " + how[0], null);
    }

    private static int ordinal(GpuInfo gpu, int count, String[] how) {
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
            sb.append(String.format(Locale.ROOT, "%02x", bytes[i] & 0xff));
        }
        return sb.toString();
    }

    /** Throws an {@link IllegalStateException} naming {@code what} when a CUDA call failed. */
    static void check(int rc, String what) {
        if (rc != 0) {
            throw new IllegalStateException(what + " failed: " + error(rc));
        }
    }

    static String error(int rc) {
        String text;
        try {
            text = JCuda.cudaGetErrorString(rc);
        } catch (RuntimeException | LinkageError e) {
            text = "?";
        }
        return rc + " (" + text + ")";
    }

    /**
     * One line from a native loading failure. JCuda's messages carry whole nested stack traces; the
     * line the dynamic linker wrote (which library is missing) is what a reader needs.
     */
    static String nativeReason(LinkageError e) {
        String message = String.valueOf(e.getMessage());
        for (String line : message.split("\\R")) {
            if (line.contains("cannot open shared object file") || line.contains("undefined symbol")) {
                return e.getClass().getSimpleName() + ": " + line.trim();
            }
        }
        return e.getClass().getSimpleName() + ": " + message.lines().findFirst().orElse("").trim();
    }
}
