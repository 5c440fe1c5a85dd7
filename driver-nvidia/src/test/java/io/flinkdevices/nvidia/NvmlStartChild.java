package io.flinkdevices.nvidia;

import com.sun.jna.Native;

/**
 * A fresh JVM's NVML start, for {@link NvmlStartITCase}: {@code driver <library>} opens NVML as
 * the driver does; {@code jna <library>} loads it with JNA's own start, as a plain JNA user does.
 * Prints NVML's GPU count and {@code jna.platform.library.path} afterwards.
 */
public final class NvmlStartChild {

    private NvmlStartChild() {}

    public static void main(String[] args) throws Exception {
        int gpus;
        if (args[0].equals("driver")) {
            gpus = Nvml.open(args[1]).deviceCount();
        } else {
            NvmlLibrary lib = Native.load(args[1], NvmlLibrary.class);
            com.sun.jna.ptr.IntByReference n = new com.sun.jna.ptr.IntByReference();
            if (lib.nvmlInit_v2() != NvmlLibrary.SUCCESS || lib.nvmlDeviceGetCount_v2(n) != NvmlLibrary.SUCCESS) {
                throw new IllegalStateException("NVML did not start");
            }
            gpus = n.getValue();
        }
        System.out.println("gpus " + gpus);
        System.out.println("jna.platform.library.path " + System.getProperty(JnaStart.PLATFORM_PATH));
    }
}
