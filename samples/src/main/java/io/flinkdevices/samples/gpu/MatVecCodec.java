package io.flinkdevices.samples.gpu;

import io.flinkdevices.job.batch.BatchCodec;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;

/**
 * Vectors into a batch, products out: an input record is {@code cols} floats, a result {@code
 * rows} floats, native order; the product keeps its vector's id.
 */
final class MatVecCodec implements BatchCodec<IdVector, IdVector> {

    private static final long serialVersionUID = 1L;

    private final int rows;
    private final int cols;
    // a float view per buffer, remade only when the batcher moves to another slot
    private transient ByteBuffer inBuffer;
    private transient FloatBuffer inFloats;
    private transient ByteBuffer outBuffer;
    private transient FloatBuffer outFloats;

    MatVecCodec(int rows, int cols) {
        this.rows = rows;
        this.cols = cols;
    }

    @Override
    public void encode(IdVector v, ByteBuffer input, int offset) {
        if (v.values.length != cols) {
            throw new IllegalArgumentException(
                    "record " + v.id + " has " + v.values.length + " values but the matrix has " + cols + " columns");
        }
        if (input != inBuffer) {
            inBuffer = input;
            inFloats = input.asFloatBuffer();
        }
        inFloats.put(offset / Float.BYTES, v.values, 0, cols);
    }

    @Override
    public IdVector decode(IdVector v, ByteBuffer output, int offset) {
        if (output != outBuffer) {
            outBuffer = output;
            outFloats = output.asFloatBuffer();
        }
        float[] product = new float[rows];
        outFloats.get(offset / Float.BYTES, product, 0, rows);
        return new IdVector(v.id, product);
    }
}
