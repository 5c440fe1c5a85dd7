package io.flinkdevices.samples.rdma;

import java.util.SplittableRandom;

/**
 * The feature table of the RDMA sample: a vector of {@code dim} floats per key, generated from the
 * key alone, so the table server, the job's check and the tests all know every vector without
 * sharing a file. {@link #score} is the enrichment the job computes, in one fixed order of float
 * operations, so a score computed from a vector the server sent equals the reference bit for bit.
 */
public final class FeatureTable {

    /** Floats per vector unless configured otherwise. */
    public static final int DEFAULT_DIM = 64;

    private FeatureTable() {}

    /** The vector of {@code key}. */
    public static float[] vector(long key, int dim) {
        SplittableRandom r = new SplittableRandom(0x5eedL * 31 + key);
        float[] v = new float[dim];
        for (int i = 0; i < dim; i++) {
            v[i] = (float) (r.nextDouble() * 2 - 1);
        }
        return v;
    }

    /** Writes the vector of {@code key} into {@code out} at {@code offset}. */
    static void vector(long key, int dim, float[] out, int offset) {
        SplittableRandom r = new SplittableRandom(0x5eedL * 31 + key);
        for (int i = 0; i < dim; i++) {
            out[offset + i] = (float) (r.nextDouble() * 2 - 1);
        }
    }

    /** The score of an event with {@code value} whose key has {@code vector} (from {@code offset}). */
    public static float score(float[] vector, int offset, int dim, float value) {
        float sum = 0f;
        for (int i = 0; i < dim; i++) {
            sum += vector[offset + i] * weight(i);
        }
        return sum * value;
    }

    /** The same score from a vector of native-order floats in {@code vectors} at byte {@code offset}. */
    static float score(java.nio.ByteBuffer vectors, int offset, int dim, float value) {
        float sum = 0f;
        for (int i = 0; i < dim; i++) {
            sum += vectors.getFloat(offset + i * Float.BYTES) * weight(i);
        }
        return sum * value;
    }

    private static float weight(int i) {
        return 1f / (1 + (i % 7));
    }
}
