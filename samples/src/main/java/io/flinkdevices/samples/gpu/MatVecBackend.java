package io.flinkdevices.samples.gpu;

import java.nio.FloatBuffer;

/**
 * Multiplies a batch of vectors with one matrix in one call. Vectors are placed one after the
 * other in {@link #input()} (off-heap, native order); products come back one after the other in
 * {@link #output()}. Not thread-safe: one backend per subtask.
 */
interface MatVecBackend extends AutoCloseable {

    /** Which hardware computes. */
    enum Path {
        CPU,
        GPU
    }

    Path path();

    /** The batch in: capacity {@code batchSize * cols} floats. */
    FloatBuffer input();

    /** The products out: capacity {@code batchSize * rows} floats. */
    FloatBuffer output();

    int batchSize();

    /** Computes the products of the first {@code count} vectors of {@link #input()}. */
    void multiply(int count);

    /** For the log: where and how it computes. */
    String describe();

    @Override
    void close();
}
