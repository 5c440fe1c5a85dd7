package io.flinkdevices.amd;

import java.util.Optional;

/**
 * One allocatable AMD unit as a backend found it: a whole GPU, or one compute partition of a GPU in
 * a non-SPX mode (each partition is then an agent of its own for ROCm, with its own index and render
 * node, as AMD's Kubernetes device plugin counts them).
 */
final class AmdGpu {

    /** The ROCm agent index: the position among the host's GPU nodes (what HIP/ROCR count). */
    final int index;
    /** The KFD {@code unique_id} as 16 hex digits, or null where unknown. */
    final String uniqueId;
    final String productName;
    final long vramBytes;
    /** {@code 0000:c1:00.0}, lower case. */
    final String pciAddress;
    /** {@code gfx942}, or null. */
    final String gfxTarget;
    /** The DRM render minor (128 for {@code renderD128}), or -1. */
    final int renderMinor;
    /** {@code SPX}, {@code CPX}, ..., or null where the kernel does not say. */
    final String computePartition;
    /** {@code NPS1}, {@code NPS4}, ..., or null. */
    final String memoryPartition;
    /** The partition's number within its GPU (0 for the first or a whole GPU). */
    final int partitionIndex;
    /** PCI device id, e.g. {@code 0x74a1}, or null. */
    final String deviceId;

    AmdGpu(
            int index,
            String uniqueId,
            String productName,
            long vramBytes,
            String pciAddress,
            String gfxTarget,
            int renderMinor,
            String computePartition,
            String memoryPartition,
            int partitionIndex,
            String deviceId) {
        this.index = index;
        this.uniqueId = uniqueId;
        this.productName = productName;
        this.vramBytes = vramBytes;
        this.pciAddress = pciAddress;
        this.gfxTarget = gfxTarget;
        this.renderMinor = renderMinor;
        this.computePartition = computePartition;
        this.memoryPartition = memoryPartition;
        this.partitionIndex = partitionIndex;
        this.deviceId = deviceId;
    }

    /** Whether the GPU is split into several compute partitions (any mode but SPX). */
    boolean partitioned() {
        return computePartition != null && !computePartition.equalsIgnoreCase("SPX");
    }

    /** {@code GPU-<unique id>}, the id ROCR_VISIBLE_DEVICES and rocminfo use, if known. */
    Optional<String> uuid() {
        return Optional.ofNullable(uniqueId).map(u -> "GPU-" + u);
    }

    /** {@code CPX/NPS4}, the partition profile of a partitioned GPU; null for SPX or unknown. */
    String partitionProfile() {
        if (!partitioned()) {
            return null;
        }
        return memoryPartition == null ? computePartition : computePartition + "/" + memoryPartition;
    }

    /** {@code /dev/dri/renderD128}, or null. */
    String renderNode() {
        return renderMinor < 0 ? null : "/dev/dri/renderD" + renderMinor;
    }

    @Override
    public String toString() {
        return "GPU " + index + " " + pciAddress + (partitioned() ? " partition " + partitionIndex : "");
    }
}
