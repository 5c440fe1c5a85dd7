package io.flinkdevices.samples.fpga;

import io.flinkdevices.job.DeviceLease;
import io.flinkdevices.samples.SampleLeases;
import io.flinkdevices.sdk.info.FpgaInfo;

import org.apache.flink.api.common.functions.RuntimeContext;

import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Which OpenCL device a FIR subtask filters on, and the program it loads: a fixed {@link FpgaInfo}
 * (local runs), or one the subtask leases from {@code getExternalResourceInfos(resourceName)}. The kernel is built from {@code fir.cl} or, given a
 * bitstream, loaded with {@code clCreateProgramWithBinary}; without one, a binary the driver
 * loaded ({@link FpgaInfo#getBitstream()} naming a file that is not {@code .cl}) is used.
 */
final class FirDevice implements Serializable {

    private static final long serialVersionUID = 1L;

    private final String resourceName;
    private final FpgaInfo fixedDevice;
    private final String bitstream;

    private FirDevice(String resourceName, FpgaInfo fixedDevice, String bitstream) {
        this.resourceName = resourceName;
        this.fixedDevice = fixedDevice;
        this.bitstream = bitstream;
    }

    static FirDevice onResource(String resourceName, String bitstream) {
        return new FirDevice(resourceName, null, bitstream);
    }

    static FirDevice fixed(FpgaInfo device, String bitstream) {
        return new FirDevice(null, device, bitstream);
    }

    /** The fixed device of a local run, or empty when devices come from the TaskManager ({@link #lease}). */
    Optional<FpgaInfo> fixed() {
        return Optional.ofNullable(fixedDevice);
    }

    /**
     * The subtask's lease of a device of the resource, or empty for a fixed device or when the
     * TaskManager received none. Subtasks share a device: each leases {@code 1 / parallelism} of
     * one, so the subtasks of a TaskManager spread over its boards.
     */
    Optional<DeviceLease> lease(RuntimeContext context) {
        if (fixedDevice != null) {
            return Optional.empty();
        }
        double share = Math.max(0.000001, 1.0 / context.getTaskInfo().getNumberOfParallelSubtasks());
        return SampleLeases.lease(context, resourceName, share);
    }

    /** Why a subtask without a device takes the CPU path. */
    String noDeviceReason() {
        return "the TaskManager received no '" + resourceName + "' device";
    }

    /** The binary to load on {@code device}, or null to build {@code fir.cl}. */
    String binaryFor(FpgaInfo device) {
        return bitstream != null ? bitstream : driverBitstream(device);
    }

    /**
     * The binary the driver loaded on the device ({@code program.path}, given to job code as the
     * info's bitstream), when it is a file and not OpenCL C source; it must hold the kernel {@code
     * fir}.
     */
    private static String driverBitstream(FpgaInfo device) {
        return device.getBitstream()
                .filter(b -> !b.endsWith(".cl") && Files.isRegularFile(Path.of(b)))
                .orElse(null);
    }

    /** Opens the backend on {@code device}. */
    OpenClFirBatchBackend open(FpgaInfo device, float[] taps, FirBatchArgs args) throws Exception {
        String binary = binaryFor(device);
        return OpenClFirBatchBackend.open(device, taps, args, binary == null ? null : Path.of(binary), null);
    }

    /** What the program came from, for the subtask's line. */
    String programOf(FpgaInfo device) {
        String binary = binaryFor(device);
        return binary == null ? "kernel built from " + OpenClFirProgram.SOURCE_RESOURCE : "bitstream " + binary;
    }
}
