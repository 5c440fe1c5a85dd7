package io.flinkdevices.samples.gpu;

import jcuda.driver.CUresult;

/**
 * Turns CUDA driver API return codes into exceptions whose message names the device and CUDA's
 * own error name ({@code CUDA_ERROR_ILLEGAL_ADDRESS}), which is what a reader searches for.
 */
final class CudaCheck {

    private CudaCheck() {}

    /** Throws an {@link IllegalStateException} when {@code rc} is not {@code CUDA_SUCCESS}. */
    static void check(int rc, String device, String what) {
        if (rc != CUresult.CUDA_SUCCESS) {
            throw new IllegalStateException(device + ": " + what + " failed: " + name(rc));
        }
    }

    /** {@code CUDA_ERROR_OUT_OF_MEMORY (2)}; never throws, even where JCuda's class cannot load. */
    static String name(int rc) {
        String text;
        try {
            text = CUresult.stringFor(rc);
        } catch (RuntimeException | LinkageError e) {
            text = "CUresult";
        }
        return text + " (" + rc + ")";
    }
}
