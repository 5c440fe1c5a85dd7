package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;

/** An NVML function that returned an error: the function, NVML's code and NVML's own words. */
final class NvmlException extends DeviceDriverException {

    private static final long serialVersionUID = 1L;

    private final int code;

    NvmlException(String function, int code, String reason) {
        super("NVML " + function + " failed: " + reason + " (nvmlReturn_t " + code + ")");
        this.code = code;
    }

    /** NVML's {@code nvmlReturn_t}; -1 when the call itself failed (a function the library lacks). */
    int code() {
        return code;
    }

    /** Whether the GPU is gone: {@code NVML_ERROR_GPU_IS_LOST} (fallen off the bus, removed). */
    boolean gpuLost() {
        return code == NvmlLibrary.ERROR_GPU_IS_LOST;
    }

    /** Whether the device or driver does not offer what was asked (the value stays unknown). */
    boolean unsupported() {
        return code == NvmlLibrary.ERROR_NOT_SUPPORTED || code == NvmlLibrary.ERROR_FUNCTION_NOT_FOUND
                || code == NvmlLibrary.ERROR_NOT_FOUND || code == Nvml.LACKING;
    }
}
