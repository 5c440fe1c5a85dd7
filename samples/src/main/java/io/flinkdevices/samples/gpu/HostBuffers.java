package io.flinkdevices.samples.gpu;

import jcuda.Pointer;
import jcuda.driver.JCudaDriver;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * The host side of a {@link CudaBatchBackend}'s slots: an input and an output buffer per slot,
 * page-locked where CUDA grants it. Asynchronous copies need page-locked memory: from pageable
 * memory the driver stages every copy through a buffer of its own and the copy from the device
 * returns only when done, so nothing overlaps. Where page-locked memory cannot be had (the
 * host's limit on locked memory, a container's cgroup) all buffers fall back to pageable direct
 * buffers and one WARN line says why; the products stay the same, only slower.
 */
final class HostBuffers {

    /** Page-locked host memory; {@link #CUDA} outside tests. */
    interface PinnedMemory {
        /** {@code cuMemHostAlloc}: a CUDA return code, the memory in {@code into} on success. */
        int allocate(Pointer into, long bytes);

        void free(Pointer memory);
    }

    static final PinnedMemory CUDA =
            new PinnedMemory() {
                @Override
                public int allocate(Pointer into, long bytes) {
                    return JCudaDriver.cuMemHostAlloc(into, bytes, 0);
                }

                @Override
                public void free(Pointer memory) {
                    JCudaDriver.cuMemFreeHost(memory);
                }
            };

    private final ByteBuffer[] inputs;
    private final ByteBuffer[] outputs;
    private final Pointer[] inputPointers;
    private final Pointer[] outputPointers;
    private final List<Pointer> pinned = new ArrayList<>();
    private final PinnedMemory memory;
    /** Why the buffers are pageable; null when they are page-locked. */
    private String pageableReason;

    private HostBuffers(int slots, PinnedMemory memory) {
        this.inputs = new ByteBuffer[slots];
        this.outputs = new ByteBuffer[slots];
        this.inputPointers = new Pointer[slots];
        this.outputPointers = new Pointer[slots];
        this.memory = memory;
    }

    /**
     * Allocates {@code slots} inputs of {@code inputBytes} and outputs of {@code outputBytes}:
     * page-locked through {@code memory}, or pageable when {@code memory} refuses one of them (then
     * {@code warn} gets one line naming {@code device} and CUDA's error).
     *
     * @throws IllegalStateException when not even pageable direct memory is left
     */
    static HostBuffers allocate(
            int slots, long inputBytes, long outputBytes, PinnedMemory memory, String device, Consumer<String> warn) {
        HostBuffers b = new HostBuffers(slots, memory);
        String refused = null;
        for (int s = 0; s < slots && refused == null; s++) {
            refused = b.pin(s, inputBytes, outputBytes);
        }
        if (refused != null) {
            b.freePinned();
            b.pageable(inputBytes, outputBytes, device, refused);
            warn.accept(
                    device
                            + ": no page-locked host memory for the batch buffers ("
                            + refused
                            + "); using pageable direct buffers instead: every copy is staged by the driver and"
                            + " none overlaps the GPU's work, so batches are slower (raise the locked-memory limit,"
                            + " ulimit -l, or use fewer or smaller slots)");
        }
        return b;
    }

    /** Null when slot {@code s} got page-locked buffers; otherwise what CUDA answered. */
    private String pin(int s, long inputBytes, long outputBytes) {
        String refused = pin(inputBytes, "slot " + s + "'s input");
        if (refused != null) {
            return refused;
        }
        inputs[s] = view(pinned.get(pinned.size() - 1), inputBytes);
        inputPointers[s] = pinned.get(pinned.size() - 1);
        refused = pin(outputBytes, "slot " + s + "'s output");
        if (refused != null) {
            return refused;
        }
        outputs[s] = view(pinned.get(pinned.size() - 1), outputBytes);
        outputPointers[s] = pinned.get(pinned.size() - 1);
        return null;
    }

    private String pin(long bytes, String what) {
        Pointer p = new Pointer();
        int rc;
        try {
            rc = memory.allocate(p, bytes);
        } catch (RuntimeException e) {
            // JCuda throws instead of returning codes when some other code enabled its exceptions.
            return "cuMemHostAlloc of " + bytes + " bytes for " + what + " failed: " + e.getMessage();
        }
        if (rc != 0) {
            return "cuMemHostAlloc of " + bytes + " bytes for " + what + " failed: " + CudaCheck.name(rc);
        }
        pinned.add(p);
        return null;
    }

    private static ByteBuffer view(Pointer p, long bytes) {
        return p.getByteBuffer(0, bytes).order(ByteOrder.nativeOrder());
    }

    private void pageable(long inputBytes, long outputBytes, String device, String reason) {
        pageableReason = reason;
        for (int s = 0; s < inputs.length; s++) {
            inputs[s] = direct(inputBytes, device);
            outputs[s] = direct(outputBytes, device);
            // Private duplicates: the task moves its buffers' positions, the copies always start at 0.
            inputPointers[s] = Pointer.to(inputs[s].duplicate());
            outputPointers[s] = Pointer.to(outputs[s].duplicate());
        }
    }

    private static ByteBuffer direct(long bytes, String device) {
        try {
            return ByteBuffer.allocateDirect(Math.toIntExact(bytes)).order(ByteOrder.nativeOrder());
        } catch (OutOfMemoryError e) {
            throw new IllegalStateException(
                    device + ": no direct memory left for a batch buffer of " + bytes + " bytes (" + e.getMessage()
                            + "); raise -XX:MaxDirectMemorySize or the TaskManager's off-heap memory,"
                            + " or use fewer or smaller slots");
        }
    }

    /** Whether the buffers are page-locked. */
    boolean pinned() {
        return pageableReason == null;
    }

    /** Why the buffers are pageable; null when they are page-locked. */
    String pageableReason() {
        return pageableReason;
    }

    ByteBuffer input(int slot) {
        return inputs[slot];
    }

    ByteBuffer output(int slot) {
        return outputs[slot];
    }

    /** What the copy to the device reads: the input's first byte, whatever the task's position. */
    Pointer inputPointer(int slot) {
        return inputPointers[slot];
    }

    /** What the copy from the device writes. */
    Pointer outputPointer(int slot) {
        return outputPointers[slot];
    }

    /** Frees the page-locked memory (once; pageable buffers are the garbage collector's). */
    void free() {
        freePinned();
        Arrays.fill(inputs, null);
        Arrays.fill(outputs, null);
    }

    private void freePinned() {
        for (Pointer p : pinned) {
            memory.free(p);
        }
        pinned.clear();
    }
}
