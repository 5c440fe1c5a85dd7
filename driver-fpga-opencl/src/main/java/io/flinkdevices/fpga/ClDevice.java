package io.flinkdevices.fpga;

import java.util.Objects;

/** One OpenCL device as its platform reports it. */
final class ClDevice {

    final String platformName;
    final int platformIndex;
    final int deviceIndex;
    final String name;
    final String vendor;
    /** {@code CL_DEVICE_TYPE}: a bit set of {@link DeviceTypes} bits. */
    final long type;
    /** {@code CL_DEVICE_GLOBAL_MEM_SIZE}, -1 when unknown. */
    final long globalMemoryBytes;
    /** {@code CL_DEVICE_MAX_COMPUTE_UNITS}, -1 when unknown. */
    final long computeUnits;
    /** The implementation's handle (a {@code cl_device_id} for JOCL); not part of equality. */
    final Object handle;

    ClDevice(
            String platformName,
            int platformIndex,
            int deviceIndex,
            String name,
            String vendor,
            long type,
            long globalMemoryBytes,
            long computeUnits,
            Object handle) {
        this.platformName = platformName;
        this.platformIndex = platformIndex;
        this.deviceIndex = deviceIndex;
        this.name = name;
        this.vendor = vendor;
        this.type = type;
        this.globalMemoryBytes = globalMemoryBytes;
        this.computeUnits = computeUnits;
        this.handle = handle;
    }

    /**
     * The device's id in the coordination file: platform name, device index and device name, the
     * same in every TaskManager of the host that sees the same OpenCL platforms.
     */
    String coordinationId() {
        return platformName + "/" + deviceIndex + "/" + name;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ClDevice)) {
            return false;
        }
        ClDevice d = (ClDevice) o;
        return platformIndex == d.platformIndex
                && deviceIndex == d.deviceIndex
                && platformName.equals(d.platformName)
                && name.equals(d.name);
    }

    @Override
    public int hashCode() {
        return Objects.hash(platformName, platformIndex, deviceIndex, name);
    }

    @Override
    public String toString() {
        return "'" + name + "' (" + platformName + ", platform " + platformIndex + " device "
                + deviceIndex + ", " + DeviceTypes.describe(type) + ")";
    }
}
