package io.flinkdevices.samples.fpga;

import static org.jocl.CL.CL_COMPLETE;
import static org.jocl.CL.CL_MEM_ALLOC_HOST_PTR;
import static org.jocl.CL.CL_MEM_READ_ONLY;
import static org.jocl.CL.CL_MEM_WRITE_ONLY;

import io.flinkdevices.job.batch.BatchBackend;
import io.flinkdevices.sdk.info.FpgaInfo;

import org.jocl.CL;
import org.jocl.CLException;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_event;
import org.jocl.cl_kernel;
import org.jocl.cl_mem;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The FIR kernel as a {@link BatchBackend}: {@code slots} batches in flight on one OpenCL device,
 * each slot with its own direct host buffers, device buffers and kernel instance.
 *
 * <p>A slot's {@link #input(int)} holds the batch's positions first ({@link #batchSize()} ints:
 * for each record, the index of its sample in the sample area) and then the sample area at byte
 * {@link #samplesOffset()} (one segment per sensor: {@code taps - 1} history samples, then the
 * batch's samples; room for {@code batchSize * taps} floats, what a batch of all-different sensors
 * needs). So a record is {@code 4 + 4 * taps} bytes of input; {@link #output(int)} holds one float
 * per record. {@link FirLayout} fills them.
 *
 * <p>{@link #start} enqueues, without waiting: the write of the positions and of the used part of
 * the sample area (up to the largest position), the kernel, and the read of the outputs, then
 * flushes the queue; the read's completion is reported through an event callback. {@link #finish}
 * waits for that callback at most the finish timeout and throws, naming the device, the slot and
 * the OpenCL error name, when the command failed or did not complete in time. Device buffers are
 * allocated with {@code CL_MEM_ALLOC_HOST_PTR}, which lets a runtime place them in host-visible
 * (pinned) memory for its DMA; where the runtime refuses, plain buffers, with one WARN line. On
 * oclgrind every command blocks inside {@code start} under the
 * process-wide OpenCL lock and {@code finish} returns at once (see {@link OpenClFirProgram} for
 * why).
 *
 * <p>Not thread-safe: one per subtask, every call from the task's thread.
 */
public final class OpenClFirBatchBackend implements BatchBackend {

    private static final Logger LOG = LoggerFactory.getLogger(OpenClFirBatchBackend.class);

    private final OpenClFirProgram program;
    private final FirBatchArgs args;
    private final int taps;
    private final Slot[] slots;
    private final long localSize;
    private final long[] local = new long[1];
    /** Whether the device buffers are host-visible ({@code CL_MEM_ALLOC_HOST_PTR}); false after the runtime refused one. */
    private boolean hostVisible = true;
    private boolean closed;

    /** One slot: host buffers, device buffers, kernel, and the completion of its last start. */
    private static final class Slot {
        final ByteBuffer input;
        final ByteBuffer output;
        final Pointer positionsPtr;
        final Pointer samplesPtr;
        final Pointer outputPtr;
        final int[] n = new int[1];
        final Pointer nPtr = Pointer.to(n);
        final long[] global = new long[1];
        cl_mem inMem;
        cl_mem posMem;
        cl_mem outMem;
        cl_kernel kernel;
        cl_event done;
        CountDownLatch completed;
        volatile int status;
        boolean inFlight;
        /** Results a blocking start already wrote (oclgrind), for the next finish; 0 otherwise. */
        int writtenByStart;

        Slot(int batchSize, int taps) {
            int positionBytes = Math.multiplyExact(batchSize, 4);
            input = direct(Math.addExact(positionBytes, Math.multiplyExact(Math.multiplyExact(batchSize, taps), 4)));
            output = direct(positionBytes);
            positionsPtr = Pointer.to(input.slice(0, positionBytes));
            samplesPtr = Pointer.to(input.slice(positionBytes, input.capacity() - positionBytes));
            outputPtr = Pointer.to(output);
        }
    }

    private OpenClFirBatchBackend(OpenClFirProgram program, FirBatchArgs args) {
        this.program = program;
        this.args = args;
        this.taps = program.taps();
        this.slots = new Slot[args.slots()];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Slot(args.batchSize(), taps);
        }
        synchronized (program.lock()) {
            for (Slot s : slots) {
                long batch = args.batchSize();
                s.posMem = deviceBuffer(CL_MEM_READ_ONLY, batch * Sizeof.cl_int);
                s.inMem = deviceBuffer(CL_MEM_READ_ONLY, batch * taps * Sizeof.cl_float);
                s.outMem = deviceBuffer(CL_MEM_WRITE_ONLY, batch * Sizeof.cl_float);
                s.kernel = program.kernel(s.inMem, s.posMem, s.outMem);
            }
            localSize = program.localSize(slots[0].kernel);
            local[0] = localSize;
        }
    }

    /**
     * A device buffer, host-visible where the runtime gives one; when it refuses ({@code
     * CL_MEM_ALLOC_HOST_PTR} is a hint some runtimes cannot honour for large buffers), this and
     * every later buffer is a plain one, said once at WARN: slower copies, never a failed task.
     */
    private cl_mem deviceBuffer(long flags, long bytes) {
        if (hostVisible) {
            try {
                return program.buffer(flags | CL_MEM_ALLOC_HOST_PTR, bytes, null);
            } catch (CLException e) {
                hostVisible = false;
                LOG.warn(
                        "{}: a host-visible buffer (CL_MEM_ALLOC_HOST_PTR, {} bytes) failed with {}; using plain device buffers",
                        program.describe(),
                        bytes,
                        CL.stringFor_errorCode(e.getStatus()));
            }
        }
        return program.buffer(flags, bytes, null);
    }

    private static ByteBuffer direct(int bytes) {
        return ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
    }

    /**
     * Opens the device (see {@link OpenClFirProgram#open}), allocates every slot's buffers and runs
     * one full batch through each slot, so that a device that compiles a work-group function at
     * the first launch (PoCL does) does it here and not inside the first batch.
     *
     * @throws IllegalArgumentException for a batch size, slot count or timeout out of range (see
     *     {@link FirBatchArgs})
     * @throws IllegalStateException naming the device and what failed, with the OpenCL error name
     */
    public static OpenClFirBatchBackend open(
            FpgaInfo device, float[] taps, FirBatchArgs args, Path bitstream, String buildOptions) throws Exception {
        OpenClFirProgram program = OpenClFirProgram.open(device, taps, bitstream, buildOptions);
        OpenClFirBatchBackend backend;
        try {
            backend = new OpenClFirBatchBackend(program, args);
        } catch (CLException e) {
            program.close();
            throw program.failure(
                    "allocating " + args.slots() + " slot(s) of buffers for batches of " + args.batchSize() + " samples", e);
        } catch (RuntimeException e) {
            program.close();
            throw e;
        }
        try {
            backend.warmUp();
            return backend;
        } catch (Exception e) {
            backend.close();
            throw e;
        }
    }

    private void warmUp() throws Exception {
        int h = taps - 1;
        for (int i = 0; i < slots.length; i++) {
            ByteBuffer in = input(i);
            for (int k = 0; k <= h; k++) {
                in.putFloat(samplesOffset() + 4 * k, 0f);
            }
            for (int r = 0; r < batchSize(); r++) {
                in.putInt(4 * r, h);
            }
            start(i, batchSize());
        }
        for (int i = 0; i < slots.length; i++) {
            finish(i);
        }
    }

    @Override
    public int slots() {
        return slots.length;
    }

    @Override
    public int batchSize() {
        return args.batchSize();
    }

    /** A position (4 bytes) and room for a segment of {@code taps} samples. */
    @Override
    public int inputRecordBytes() {
        return 4 + 4 * taps;
    }

    @Override
    public int outputRecordBytes() {
        return 4;
    }

    /** Byte offset of the sample area in every slot's input buffer. */
    public int samplesOffset() {
        return 4 * batchSize();
    }

    /** Taps of the filter. */
    public int taps() {
        return taps;
    }

    @Override
    public ByteBuffer input(int slot) {
        return slot(slot).input;
    }

    @Override
    public ByteBuffer output(int slot) {
        return slot(slot).output;
    }

    private Slot slot(int slot) {
        if (slot < 0 || slot >= slots.length) {
            throw new IndexOutOfBoundsException("slot " + slot + " of " + slots.length);
        }
        return slots[slot];
    }

    @Override
    public void start(int slot, int records) {
        Slot s = slot(slot);
        if (closed) {
            throw new IllegalStateException(program.describe() + ": the FIR backend is closed");
        }
        if (s.inFlight) {
            throw new IllegalStateException("slot " + slot + " is still in flight: finish it before starting it again");
        }
        if (records < 1 || records > batchSize()) {
            throw new IllegalArgumentException("records must be in 1.." + batchSize() + " but is " + records);
        }
        long samples = usedSamples(s.input, records);
        boolean serial = program.serialRuntime();
        synchronized (program.lock()) {
            try {
                var queue = program.queue();
                CL.clEnqueueWriteBuffer(queue, s.posMem, serial, 0, (long) records * Sizeof.cl_int, s.positionsPtr, 0, null, null);
                CL.clEnqueueWriteBuffer(queue, s.inMem, serial, 0, samples * Sizeof.cl_float, s.samplesPtr, 0, null, null);
                s.n[0] = records;
                CL.clSetKernelArg(s.kernel, 5, Sizeof.cl_int, s.nPtr);
                // padded to whole work groups; the kernel skips work items >= n
                s.global[0] = (records + localSize - 1) / localSize * localSize;
                CL.clEnqueueNDRangeKernel(queue, s.kernel, 1, null, s.global, local, 0, null, null);
                if (serial) {
                    CL.clEnqueueReadBuffer(queue, s.outMem, true, 0, (long) records * Sizeof.cl_float, s.outputPtr, 0, null, null);
                    s.writtenByStart = records;
                    return;
                }
                cl_event done = new cl_event();
                CL.clEnqueueReadBuffer(queue, s.outMem, false, 0, (long) records * Sizeof.cl_float, s.outputPtr, 0, null, done);
                CountDownLatch completed = new CountDownLatch(1);
                s.done = done;
                s.completed = completed;
                s.status = 1;
                s.inFlight = true;
                CL.clSetEventCallback(
                        done,
                        CL_COMPLETE,
                        (event, status, data) -> {
                            s.status = status;
                            completed.countDown();
                        },
                        null);
                CL.clFlush(queue);
            } catch (CLException e) {
                throw program.failure("starting batch of " + records + " samples in slot " + slot, e);
            }
        }
    }

    /**
     * Samples of the sample area the batch uses: one past the largest position (segments are laid
     * out one after the other, each record's position inside its sensor's segment).
     */
    private long usedSamples(ByteBuffer input, int records) {
        int max = 0;
        for (int r = 0; r < records; r++) {
            max = Math.max(max, input.getInt(4 * r));
        }
        long limit = (long) batchSize() * taps;
        if (max >= limit) {
            throw new IllegalArgumentException("position " + max + " is beyond the sample area of " + limit + " samples");
        }
        return max + 1L;
    }

    @Override
    public int finish(int slot) throws InterruptedException {
        Slot s = slot(slot);
        if (!s.inFlight) {
            // a blocking runtime's start wrote the results already
            int written = s.writtenByStart;
            s.writtenByStart = 0;
            return written;
        }
        Duration timeout = args.finishTimeout();
        boolean inTime = s.completed.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (!inTime) {
            // the slot stays in flight: its buffers still belong to the device
            throw new IllegalStateException(
                    program.describe()
                            + ": the batch in slot "
                            + slot
                            + " did not complete within "
                            + timeout.toMillis()
                            + " ms (finish timeout); the device or its runtime is stuck or overloaded");
        }
        s.inFlight = false;
        int status = s.status;
        synchronized (program.lock()) {
            CL.clReleaseEvent(s.done);
        }
        s.done = null;
        if (status != CL_COMPLETE) {
            throw new IllegalStateException(
                    program.describe() + ": the batch in slot " + slot + " failed with " + CL.stringFor_errorCode(status));
        }
        return s.n[0];
    }

    @Override
    public String describe() {
        return program.describe() + ", " + batching();
    }

    /** The device, as {@code OpenCL device #0 'name' of platform #1 'platform'}. */
    public String device() {
        return program.describe();
    }

    /** How batches run: slots, batch size, buffers, commands, finish timeout. */
    public String batching() {
        return slots.length
                + " slot(s) of "
                + batchSize()
                + " samples, "
                + (hostVisible ? "host-visible" : "plain")
                + " device buffers, "
                + (program.serialRuntime() ? "blocking commands (oclgrind)" : "non-blocking commands with events")
                + ", finish timeout "
                + args.finishTimeout().toMillis()
                + " ms";
    }

    /**
     * Waits (bounded, each slot at most the finish timeout) for batches still in flight, so the
     * device no longer writes into the host buffers, then releases the device; never throws.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Slot s : slots) {
            if (s.inFlight) {
                try {
                    s.completed.await(args.finishTimeout().toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        try {
            synchronized (program.lock()) {
                for (Slot s : slots) {
                    if (s.done != null) {
                        CL.clReleaseEvent(s.done);
                        s.done = null;
                    }
                }
            }
            program.close();
        } catch (RuntimeException e) {
            // releasing is best effort: the context goes with the process at the latest
        }
    }
}
