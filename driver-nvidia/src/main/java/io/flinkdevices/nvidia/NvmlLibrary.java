package io.flinkdevices.nvidia;

import com.sun.jna.Library;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * The functions of NVIDIA's management library ({@code libnvidia-ml.so.1}, {@code nvml.h}) this
 * driver calls, mapped by hand through JNA, and nothing else. Every function returns an {@code
 * nvmlReturn_t} ({@link #SUCCESS} or an error code for {@link #nvmlErrorString(int)}); handles
 * ({@code nvmlDevice_t}, {@code nvmlEventSet_t}) are opaque pointers. Structures are read from
 * plain memory at the offsets of {@code nvml.h} (x86-64 and aarch64 share them), see {@link Nvml}.
 *
 * <p>Called through {@link Nvml} only, which guards loading and turns codes into messages.
 */
interface NvmlLibrary extends Library {

    int SUCCESS = 0;
    int ERROR_UNINITIALIZED = 1;
    int ERROR_NOT_SUPPORTED = 3;
    int ERROR_NOT_FOUND = 6;
    int ERROR_TIMEOUT = 10;
    int ERROR_FUNCTION_NOT_FOUND = 13;
    int ERROR_GPU_IS_LOST = 15;
    int ERROR_ARGUMENT_VERSION_MISMATCH = 25;

    /** {@code NVML_DEVICE_NAME_V2_BUFFER_SIZE}. */
    int NAME_BUFFER = 96;
    /** {@code NVML_DEVICE_UUID_V2_BUFFER_SIZE}. */
    int UUID_BUFFER = 96;
    /** {@code sizeof(nvmlPciInfo_t)}: busIdLegacy[16], 5 unsigned ints, busId[32]. */
    int PCI_INFO_SIZE = 68;
    /** Offset of {@code busId} in {@code nvmlPciInfo_t}. */
    int PCI_INFO_BUS_ID = 36;
    /** {@code sizeof(nvmlMemory_t)}: total, free, used. */
    int MEMORY_V1_SIZE = 24;
    /** {@code sizeof(nvmlMemory_v2_t)}: version, (pad), total, reserved, free, used. */
    int MEMORY_V2_SIZE = 40;
    /** {@code nvmlMemory_v2}: {@code sizeof | 2 << 24}. */
    int MEMORY_V2_VERSION = MEMORY_V2_SIZE | 2 << 24;
    /** {@code sizeof(nvmlEventData_t)}: device, eventType, eventData, gpuInstanceId, computeInstanceId. */
    int EVENT_DATA_SIZE = 32;

    /** {@code NVML_TEMPERATURE_GPU}. */
    int TEMPERATURE_GPU = 0;
    /** {@code NVML_MEMORY_ERROR_TYPE_CORRECTED}. */
    int ECC_CORRECTED = 0;
    /** {@code NVML_MEMORY_ERROR_TYPE_UNCORRECTED}. */
    int ECC_UNCORRECTED = 1;
    /** {@code NVML_VOLATILE_ECC}: counts since the driver loaded. */
    int ECC_VOLATILE = 0;
    /** {@code NVML_DEVICE_MIG_ENABLE}. */
    int MIG_ENABLE = 1;

    /** {@code nvmlEventTypeSingleBitEccError}. */
    long EVENT_SINGLE_BIT_ECC = 0x1L;
    /** {@code nvmlEventTypeDoubleBitEccError}. */
    long EVENT_DOUBLE_BIT_ECC = 0x2L;
    /** {@code nvmlEventTypeXidCriticalError}. */
    long EVENT_XID_CRITICAL = 0x8L;
    /** The instance id of an event that concerns the whole GPU. */
    int ALL_INSTANCES = 0xFFFFFFFF;

    int nvmlInit_v2();

    int nvmlShutdown();

    String nvmlErrorString(int result);

    int nvmlDeviceGetCount_v2(IntByReference count);

    int nvmlDeviceGetHandleByIndex_v2(int index, PointerByReference device);

    int nvmlDeviceGetName(Pointer device, byte[] name, int length);

    int nvmlDeviceGetUUID(Pointer device, byte[] uuid, int length);

    int nvmlDeviceGetPciInfo_v3(Pointer device, Pointer pciInfo);

    int nvmlDeviceGetMemoryInfo(Pointer device, Pointer memory);

    int nvmlDeviceGetMemoryInfo_v2(Pointer device, Pointer memory);

    int nvmlDeviceGetUtilizationRates(Pointer device, Pointer utilization);

    int nvmlDeviceGetTemperature(Pointer device, int sensor, IntByReference celsius);

    int nvmlDeviceGetPowerUsage(Pointer device, IntByReference milliwatts);

    int nvmlDeviceGetTotalEccErrors(Pointer device, int errorType, int counterType, LongByReference count);

    int nvmlDeviceGetCurrentClocksThrottleReasons(Pointer device, LongByReference reasons);

    int nvmlDeviceGetCudaComputeCapability(Pointer device, IntByReference major, IntByReference minor);

    int nvmlDeviceGetMigMode(Pointer device, IntByReference current, IntByReference pending);

    int nvmlDeviceGetMaxMigDeviceCount(Pointer device, IntByReference count);

    int nvmlDeviceGetMigDeviceHandleByIndex(Pointer device, int index, PointerByReference migDevice);

    int nvmlDeviceGetGpuInstanceId(Pointer device, IntByReference id);

    int nvmlDeviceGetComputeInstanceId(Pointer device, IntByReference id);

    int nvmlDeviceGetSupportedEventTypes(Pointer device, LongByReference eventTypes);

    int nvmlEventSetCreate(PointerByReference set);

    int nvmlDeviceRegisterEvents(Pointer device, long eventTypes, Pointer set);

    int nvmlEventSetWait_v2(Pointer set, Pointer data, int timeoutMs);

    int nvmlEventSetFree(Pointer set);
}
