package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;

import com.sun.jna.Pointer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What NVML says of one GPU that a later discovery in the same TaskManager need not ask again: its
 * name, total memory, PCI address and compute capability, which cannot change while the GPU is in
 * the machine, and its MIG mode, read again once older than {@link #MIG_MODE_TTL_NANOS}.
 *
 * <p>Why MIG mode is kept at all: {@code nvmlDeviceGetMigMode} costs about 160 us (measured on an
 * H100 and an H200), more than every other call of a discovery together, and a TaskManager's drivers
 * (one for whole GPUs, one for MIG units) discover one right after the other. A change of MIG mode
 * takes a GPU reset with no process on the GPU, which takes seconds; a mode read less than a second
 * ago is the mode now.
 */
final class GpuFacts {

    private static final Logger LOG = LoggerFactory.getLogger(GpuFacts.class);

    /** How long a MIG mode read is used again, in nanoseconds: one second. */
    static final long MIG_MODE_TTL_NANOS = 1_000_000_000L;

    final String uuid;
    final String name;
    final long memoryBytes;
    final String pciAddress;
    /** {@code sm_90}; null where NVML cannot say. */
    final String architecture;

    private boolean migEnabled;
    private long migReadAt;
    private boolean migRead;

    private GpuFacts(String uuid, String name, long memoryBytes, String pciAddress, String architecture) {
        this.uuid = uuid;
        this.name = name;
        this.memoryBytes = memoryBytes;
        this.pciAddress = pciAddress;
        this.architecture = architecture;
    }

    /** Reads the facts of {@code device}, whose UUID is {@code uuid}. */
    static GpuFacts read(Nvml nvml, Pointer device, String uuid) throws DeviceDriverException {
        String architecture = null;
        try {
            int[] cc = nvml.computeCapability(device);
            // CUDA's compute capabilities are 1.0 and up, minor one digit: anything else names no
            // architecture (a major of -5 would read sm_-50), so it is left out, not handed on
            if (cc[0] >= 1 && cc[0] <= 99 && cc[1] >= 0 && cc[1] <= 9) {
                architecture = "sm_" + cc[0] + cc[1];
            } else {
                LOG.warn("NVML (nvmlDeviceGetCudaComputeCapability) reports compute capability major {} minor {} for GPU {};"
                        + " expected a major from 1 to 99 and a minor from 0 to 9: its architecture is left out", cc[0], cc[1], uuid);
            }
        } catch (NvmlException e) {
            if (!e.unsupported()) {
                throw e;
            }
        }
        return new GpuFacts(uuid, nvml.name(device), nvml.memory(device)[0],
                NvmlBackend.pciAddress(nvml.pciBusId(device)), architecture);
    }

    /** Whether MIG mode is on: NVML's answer, asked again when the last is a second old. */
    synchronized boolean migEnabled(Nvml nvml, Pointer device) throws NvmlException {
        long now = System.nanoTime();
        if (!migRead || now - migReadAt >= MIG_MODE_TTL_NANOS) {
            migEnabled = nvml.migEnabled(device);
            migReadAt = now;
            migRead = true;
        }
        return migEnabled;
    }
}
