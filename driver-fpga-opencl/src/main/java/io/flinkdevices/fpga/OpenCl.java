package io.flinkdevices.fpga;

import io.flinkdevices.sdk.DeviceDriverException;

import java.util.List;
import java.util.Optional;

/**
 * The part of OpenCL the driver uses: list platforms and devices, load a program on a device, ask
 * whether a device is still available.
 */
interface OpenCl {

    /** What answers, for error messages, e.g. {@code OpenCL through JOCL}. */
    String describe();

    /**
     * Every platform the OpenCL ICD loader reports, in {@code clGetPlatformIDs} order, each with
     * all its devices in {@code clGetDeviceIDs(CL_DEVICE_TYPE_ALL)} order. Empty when the loader
     * finds no platform.
     *
     * @throws DeviceDriverException when OpenCL cannot be loaded or a query fails
     */
    List<ClPlatform> platforms() throws DeviceDriverException;

    /**
     * Creates {@code program} on {@code device} in a context of its own and builds it.
     *
     * @return empty when it loads and builds, else why not (with the tail of the build log)
     * @throws DeviceDriverException when OpenCL itself fails (not the program)
     */
    Optional<String> tryProgram(ClDevice device, ProgramFile program) throws DeviceDriverException;

    /**
     * {@code CL_DEVICE_AVAILABLE} of {@code device}, now: whether the runtime still offers it.
     *
     * @throws DeviceDriverException when the query fails
     */
    boolean available(ClDevice device) throws DeviceDriverException;
}
