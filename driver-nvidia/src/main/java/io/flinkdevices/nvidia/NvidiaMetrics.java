package io.flinkdevices.nvidia;

/**
 * The NVIDIA monitor's metric names and units ({@code metric.<name>} keys), DCGM's field names
 * without {@code DCGM_FI_DEV_}, lower case, in DCGM's units, so that dashboards built on
 * DCGM-exporter read the same numbers.
 */
final class NvidiaMetrics {

    /** GPU utilisation, percent ({@code DCGM_FI_DEV_GPU_UTIL}). */
    static final String GPU_UTIL = "gpu_util";
    /** Memory (copy) utilisation, percent ({@code DCGM_FI_DEV_MEM_COPY_UTIL}). */
    static final String MEM_COPY_UTIL = "mem_copy_util";
    /** Framebuffer used, MiB ({@code DCGM_FI_DEV_FB_USED}). */
    static final String FB_USED = "fb_used";
    /** Framebuffer total, MiB ({@code DCGM_FI_DEV_FB_TOTAL}). */
    static final String FB_TOTAL = "fb_total";
    /** GPU temperature, degrees Celsius ({@code DCGM_FI_DEV_GPU_TEMP}). */
    static final String GPU_TEMP = "gpu_temp";
    /** Power draw, watts ({@code DCGM_FI_DEV_POWER_USAGE}). */
    static final String POWER_USAGE = "power_usage";
    /** Corrected (single-bit) ECC errors since the driver loaded ({@code DCGM_FI_DEV_ECC_SBE_VOL_TOTAL}). */
    static final String ECC_SBE_VOL_TOTAL = "ecc_sbe_vol_total";
    /** Uncorrected (double-bit) ECC errors since the driver loaded ({@code DCGM_FI_DEV_ECC_DBE_VOL_TOTAL}). */
    static final String ECC_DBE_VOL_TOTAL = "ecc_dbe_vol_total";
    /** The last Xid seen, 0 for none ({@code DCGM_FI_DEV_XID_ERRORS}); NVML sampler only. */
    static final String XID_ERRORS = "xid_errors";

    /**
     * The clock throttle reasons now, NVML's {@code nvmlClocksThrottleReason*} bitmask as a number
     * ({@code DCGM_FI_DEV_CLOCK_THROTTLE_REASONS}; nvidia-smi's {@code clocks_throttle_reasons.active}).
     */
    static final String CLOCK_THROTTLE_REASONS = "clock_throttle_reasons";

    /**
     * The reasons that make a GPU {@code degraded}: HW slowdown (0x8), HW thermal slowdown (0x40),
     * HW power brake slowdown (0x80): the hardware, not the load or an application setting, holds
     * the clocks down (overheating, a failing power supply). The GPU computes right, only slower.
     */
    static final long HW_SLOWDOWN = 0x8L | 0x40L | 0x80L;

    static final double MIB = 1024.0 * 1024.0;

    /** Why a GPU whose {@link #CLOCK_THROTTLE_REASONS} is {@code reasons} is degraded; null when it is not. */
    static String degraded(String gpu, Double reasons, String source) {
        if (reasons == null || (reasons.longValue() & HW_SLOWDOWN) == 0) {
            return null;
        }
        return "GPU " + gpu + " clocks held down by the hardware (" + source + " 0x" + Long.toHexString(reasons.longValue())
                + ": HW slowdown, thermal or power brake)";
    }

    private NvidiaMetrics() {}
}
