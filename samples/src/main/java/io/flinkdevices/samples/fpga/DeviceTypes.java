package io.flinkdevices.samples.fpga;

import org.jocl.CL;

import java.util.Locale;

/** The OpenCL driver's {@code device.types} list (ACCELERATOR, CPU, GPU, CUSTOM, DEFAULT, ALL) as type bits. */
final class DeviceTypes {

    private DeviceTypes() {}

    static long parse(String list) {
        long bits = 0;
        for (String part : list.split(",")) {
            String t = part.trim().toUpperCase(Locale.ROOT);
            switch (t) {
                case "ACCELERATOR":
                    bits |= CL.CL_DEVICE_TYPE_ACCELERATOR;
                    break;
                case "CPU":
                    bits |= CL.CL_DEVICE_TYPE_CPU;
                    break;
                case "GPU":
                    bits |= CL.CL_DEVICE_TYPE_GPU;
                    break;
                case "CUSTOM":
                    bits |= CL.CL_DEVICE_TYPE_CUSTOM;
                    break;
                case "DEFAULT":
                    bits |= CL.CL_DEVICE_TYPE_DEFAULT;
                    break;
                case "ALL":
                    bits |= CL.CL_DEVICE_TYPE_ALL;
                    break;
                default:
                    throw new IllegalArgumentException(
                            "device types must be a comma list of ACCELERATOR, CPU, GPU, CUSTOM, DEFAULT, ALL but has '"
                                    + part
                                    + "'");
            }
        }
        return bits;
    }
}
