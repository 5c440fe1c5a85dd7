package io.flinkdevices.samples.gpu;

import jcuda.Pointer;
import jcuda.runtime.JCuda;

import java.nio.ByteOrder;
import java.nio.FloatBuffer;

/**
 * What both GPU paths share: the CUDA device, the batch's page-locked host buffers (which the
 * copies read and write directly) and a close that releases the device's memory once, never
 * throwing.
 */
abstract class GpuMatVec implements MatVecBackend {

    final int device;
    final int rows;
    final int cols;
    final String deviceName;
    /** Page-locked host memory of the batch in and the products out; allocated by the subclass. */
    final Pointer hX = new Pointer();
    final Pointer hY = new Pointer();
    private final int batchSize;
    private FloatBuffer input;
    private FloatBuffer output;
    private boolean closed;

    GpuMatVec(int device, Matrix matrix, int batchSize, String deviceName) {
        this.device = device;
        this.rows = matrix.rows();
        this.cols = matrix.cols();
        this.batchSize = batchSize;
        this.deviceName = deviceName;
    }

    /** Bytes of the batch in. */
    long inputBytes() {
        return (long) batchSize * cols * Float.BYTES;
    }

    /** Bytes of the products out. */
    long outputBytes() {
        return (long) batchSize * rows * Float.BYTES;
    }

    /** Makes {@link #hX} and {@link #hY}, once allocated, the batch's {@link #input} and {@link #output}. */
    void mapHostBuffers() {
        input = hX.getByteBuffer(0, inputBytes()).order(ByteOrder.nativeOrder()).asFloatBuffer();
        output = hY.getByteBuffer(0, outputBytes()).order(ByteOrder.nativeOrder()).asFloatBuffer();
    }

    @Override
    public final Path path() {
        return Path.GPU;
    }

    @Override
    public final FloatBuffer input() {
        return input;
    }

    @Override
    public final FloatBuffer output() {
        return output;
    }

    @Override
    public final int batchSize() {
        return batchSize;
    }

    /** Frees what the subclass allocated; the device is current. */
    abstract void release();

    @Override
    public final void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            JCuda.cudaSetDevice(device);
            release();
        } catch (RuntimeException | LinkageError e) {
            System.err.println("GPU path: releasing device memory failed: " + e);
        }
        input = null;
        output = null;
    }
}
