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

    static final double MIB = 1024.0 * 1024.0;

    private NvidiaMetrics() {}
}
