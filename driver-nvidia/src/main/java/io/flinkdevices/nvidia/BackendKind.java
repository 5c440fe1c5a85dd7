package io.flinkdevices.nvidia;

/** The values of the {@code backend} parameter. */
enum BackendKind {
    /** {@code discovery-script.*} set: the script; otherwise NVML, then nvidia-smi, then JCuda. */
    AUTO,
    /** NVIDIA's management library ({@code libnvidia-ml.so.1}) through JNA: no process. */
    NVML,
    /** One {@code nvidia-smi --query-gpu} process (plus {@code nvidia-smi -L} for MIG). */
    NVIDIA_SMI,
    /** The CUDA driver API through JCuda. */
    JCUDA,
    /** Flink's discovery-script contract. */
    SCRIPT
}
