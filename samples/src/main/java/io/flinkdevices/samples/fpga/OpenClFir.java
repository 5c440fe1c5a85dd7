package io.flinkdevices.samples.fpga;

import static org.jocl.CL.CL_MEM_READ_ONLY;
import static org.jocl.CL.CL_MEM_WRITE_ONLY;
import static org.jocl.CL.CL_TRUE;

import io.flinkdevices.sdk.info.FpgaInfo;

import org.jocl.CL;
import org.jocl.CLException;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_kernel;
import org.jocl.cl_mem;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.file.Path;

/**
 * The FIR kernel on one OpenCL device, one batch at a time: the bare loop the benchmark measures
 * the device's own limit with, and the kernel tests. (The job uses {@link OpenClFirBatchBackend},
 * which keeps several batches in flight.)
 *
 * <p>The caller fills {@link #input()} (one segment per sensor: {@code taps - 1} history samples,
 * then the batch's samples) and {@link #positions()} (index in the input of each record's
 * sample), calls {@link #run(int, int)}, and reads {@link #output()} (one filtered sample per
 * record, in record order). A run is two writes, one kernel and one blocking read: one wait per
 * batch. The writes are non-blocking except on oclgrind (see {@link OpenClFirProgram}): a wait
 * per write costs PoCL about half its kernel throughput at 4096 samples per batch.
 *
 * <p>Not thread-safe; one per caller.
 */
final class OpenClFir implements AutoCloseable {

    /** The kernel's source, a class-path resource next to this class. */
    static final String SOURCE_RESOURCE = OpenClFirProgram.SOURCE_RESOURCE;

    private final OpenClFirProgram program;
    private final int maxRecords;
    private final int maxInput;
    private final FloatBuffer input;
    private final IntBuffer positions;
    private final FloatBuffer output;
    private final Pointer inputPtr;
    private final Pointer positionsPtr;
    private final Pointer outputPtr;
    private cl_kernel kernel;
    private cl_mem inMem;
    private cl_mem posMem;
    private cl_mem outMem;
    private final long[] globalSize = new long[1];
    private final long[] localSize = new long[1];
    private final int[] nArg = new int[1];
    private final Pointer nArgPtr = Pointer.to(nArg);

    private OpenClFir(OpenClFirProgram program, int maxRecords) {
        this.program = program;
        this.maxRecords = maxRecords;
        this.maxInput = Math.multiplyExact(maxRecords, program.taps());
        this.input = direct(maxInput).asFloatBuffer();
        this.positions = direct(maxRecords).asIntBuffer();
        this.output = direct(maxRecords).asFloatBuffer();
        this.inputPtr = Pointer.to(input);
        this.positionsPtr = Pointer.to(positions);
        this.outputPtr = Pointer.to(output);
    }

    private static ByteBuffer direct(int floats) {
        return ByteBuffer.allocateDirect(Math.multiplyExact(floats, 4)).order(ByteOrder.nativeOrder());
    }

    /**
     * Opens the device (see {@link OpenClFirProgram#open}) and allocates buffers for batches of up
     * to {@code maxRecords}.
     *
     * @throws IllegalStateException naming the device and what failed
     */
    static OpenClFir open(FpgaInfo device, float[] taps, int maxRecords, Path bitstream, String buildOptions) {
        OpenClFirProgram program = OpenClFirProgram.open(device, taps, bitstream, buildOptions);
        OpenClFir fir = new OpenClFir(program, maxRecords);
        try {
            synchronized (program.lock()) {
                fir.inMem = program.buffer(CL_MEM_READ_ONLY, (long) fir.maxInput * Sizeof.cl_float, null);
                fir.posMem = program.buffer(CL_MEM_READ_ONLY, (long) maxRecords * Sizeof.cl_int, null);
                fir.outMem = program.buffer(CL_MEM_WRITE_ONLY, (long) maxRecords * Sizeof.cl_float, null);
                fir.kernel = program.kernel(fir.inMem, fir.posMem, fir.outMem);
                fir.localSize[0] = program.localSize(fir.kernel);
            }
            fir.warmUp();
            return fir;
        } catch (CLException e) {
            program.close();
            throw program.failure("allocating buffers for batches of " + maxRecords, e);
        } catch (RuntimeException e) {
            program.close();
            throw e;
        }
    }

    /**
     * One full-size run on zeros, so that a device that compiles a work-group function at the
     * first launch (PoCL does, per work-group size) does it here and not inside the first batch.
     */
    private void warmUp() {
        int h = program.taps() - 1;
        for (int i = 0; i <= h; i++) {
            input.put(i, 0f);
        }
        for (int i = 0; i < maxRecords; i++) {
            positions.put(i, h);
        }
        run(maxRecords, h + 1);
    }

    /** Samples in: one segment per sensor, history first. Holds up to {@code maxRecords * taps}. */
    FloatBuffer input() {
        return input;
    }

    /** For each record, the index of its sample in {@link #input()}. */
    IntBuffer positions() {
        return positions;
    }

    /** For each record, its filtered sample, after {@link #run}. */
    FloatBuffer output() {
        return output;
    }

    int maxRecords() {
        return maxRecords;
    }

    int taps() {
        return program.taps();
    }

    String describe() {
        return program.describe();
    }

    /**
     * Filters one batch: writes the first {@code inputLength} input samples and {@code records}
     * positions, runs the kernel over {@code records} work items, and reads {@code records}
     * outputs back, waiting once.
     */
    void run(int records, int inputLength) {
        if (records <= 0) {
            return;
        }
        if (records > maxRecords || inputLength > maxInput) {
            throw new IllegalArgumentException(
                    records + " records / " + inputLength + " samples exceed the buffers (" + maxRecords + " / " + maxInput + ")");
        }
        synchronized (program.lock()) {
            boolean blocking = program.serialRuntime();
            var queue = program.queue();
            CL.clEnqueueWriteBuffer(queue, inMem, blocking, 0, (long) inputLength * Sizeof.cl_float, inputPtr, 0, null, null);
            CL.clEnqueueWriteBuffer(queue, posMem, blocking, 0, (long) records * Sizeof.cl_int, positionsPtr, 0, null, null);
            nArg[0] = records;
            CL.clSetKernelArg(kernel, 5, Sizeof.cl_int, nArgPtr);
            // padded to whole work groups; the kernel skips work items >= n
            globalSize[0] = (records + localSize[0] - 1) / localSize[0] * localSize[0];
            CL.clEnqueueNDRangeKernel(queue, kernel, 1, null, globalSize, localSize, 0, null, null);
            CL.clEnqueueReadBuffer(queue, outMem, CL_TRUE, 0, (long) records * Sizeof.cl_float, outputPtr, 0, null, null);
        }
    }

    @Override
    public void close() {
        program.close();
    }
}
