package io.flinkdevices.samples.fpga;

import static org.jocl.CL.CL_DEVICE_TYPE;
import static org.jocl.CL.CL_DEVICE_TYPE_ALL;

import io.flinkdevices.sdk.info.FpgaInfo;

import org.jocl.CL;
import org.jocl.CLException;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_device_id;
import org.jocl.cl_platform_id;

import java.util.ArrayList;
import java.util.List;

/**
 * The OpenCL devices this process sees, without a driver: for runs outside a device cluster (the
 * throughput harness, unit tests) and to say why there is no OpenCL here.
 */
public final class OpenClDevices {

    /** One device: its {@link FpgaInfo} and its {@code CL_DEVICE_TYPE} bits. */
    public static final class Device {
        /** How job code sees the device. */
        public final FpgaInfo info;
        /** {@code CL_DEVICE_TYPE} bits. */
        public final long type;

        Device(FpgaInfo info, long type) {
            this.info = info;
            this.type = type;
        }

        /** True when the type has {@code bit} set (for example {@code CL.CL_DEVICE_TYPE_CPU}). */
        public boolean is(long bit) {
            return (type & bit) != 0;
        }

        @Override
        public String toString() {
            return info.getPlatform() + " / " + info.getDeviceName();
        }
    }

    /** What {@link #list()} found: the devices, or why there are none. */
    public static final class Listing {
        /** Every device of every platform, in platform then device order. */
        public final List<Device> devices;
        /** Why there is no device, or null when there is one. */
        public final String unavailable;

        Listing(List<Device> devices, String unavailable) {
            this.devices = List.copyOf(devices);
            this.unavailable = unavailable;
        }

        /** The first device of a platform whose name contains {@code platformPart}, if any. */
        public java.util.Optional<Device> first(String platformPart) {
            return devices.stream().filter(d -> d.info.getPlatform().contains(platformPart)).findFirst();
        }
    }

    private OpenClDevices() {}

    /**
     * The devices of {@code listing} the OpenCL driver would consider: of one of the {@code
     * deviceTypes} (its {@code device.types}, matched by bit) on a platform whose name the {@code
     * platformPattern} finds.
     */
    public static List<Device> matching(Listing listing, String deviceTypes, String platformPattern) {
        long types = DeviceTypes.parse(deviceTypes);
        java.util.regex.Pattern platform = java.util.regex.Pattern.compile(platformPattern);
        return listing.devices.stream()
                .filter(d -> d.is(types) && platform.matcher(d.info.getPlatform()).find())
                .collect(java.util.stream.Collectors.toList());
    }

    /** Lists every OpenCL device, or says why none can be listed (no loader, no platform). */
    public static Listing list() {
        try {
            CL.setExceptionsEnabled(true);
            int[] count = new int[1];
            try {
                CL.clGetPlatformIDs(0, null, count);
            } catch (CLException e) {
                return new Listing(List.of(), "the OpenCL loader finds no platform (" + e.getMessage() + ")");
            }
            if (count[0] == 0) {
                return new Listing(List.of(), "the OpenCL loader finds no platform");
            }
            cl_platform_id[] platforms = new cl_platform_id[count[0]];
            CL.clGetPlatformIDs(count[0], platforms, null);
            List<Device> devices = new ArrayList<>();
            for (int p = 0; p < platforms.length; p++) {
                String platformName = OpenClStrings.platformName(platforms[p]);
                int[] n = new int[1];
                try {
                    CL.clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, null, n);
                } catch (CLException e) {
                    continue; // CL_DEVICE_NOT_FOUND: a platform without devices
                }
                cl_device_id[] ids = new cl_device_id[n[0]];
                CL.clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, n[0], ids, null);
                for (int d = 0; d < ids.length; d++) {
                    long[] type = new long[1];
                    CL.clGetDeviceInfo(ids[d], CL_DEVICE_TYPE, Sizeof.cl_long, Pointer.to(type), null);
                    devices.add(
                            new Device(
                                    FpgaInfo.builder(platformName, p, OpenClStrings.deviceName(ids[d]), d).build(),
                                    type[0]));
                }
            }
            return new Listing(devices, devices.isEmpty() ? "no OpenCL platform has a device" : null);
        } catch (LinkageError e) {
            return new Listing(
                    List.of(), "JOCL's native library or the OpenCL loader (libOpenCL.so.1) cannot load: " + e);
        } catch (CLException e) {
            return new Listing(List.of(), "OpenCL fails: " + e.getMessage());
        }
    }
}
