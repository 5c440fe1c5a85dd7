package io.flinkdevices.amd;

/** The values of the {@code backend} parameter. */
enum BackendKind {
    /** sysfs, then amd-smi, then rocm-smi: the first that works. */
    AUTO,
    /** The KFD topology under {@code sysfs.root}: no process, no native library. */
    SYSFS,
    /** One {@code amd-smi static --json} process. */
    AMD_SMI,
    /** One {@code rocm-smi ... --json} process (the older tool). */
    ROCM_SMI
}
