package io.flinkdevices.samples.gpu;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * A record of the GPU sample job: an id and a vector of floats (a Flink POJO: public fields and
 * a no-arg constructor, so Flink serializes it without Kryo).
 */
public final class IdVector {

    /** Identifies the record; the product keeps the id of its input vector. */
    public long id;

    /** The vector. */
    public float[] values;

    /** For Flink's POJO serializer. */
    public IdVector() {}

    /** A record with the given id and values (not copied). */
    public IdVector(long id, float[] values) {
        this.id = id;
        this.values = values;
    }

    /** The deterministic input vector number {@code id} of {@code dims} values in [-1, 1). */
    public static IdVector generate(long id, int dims, long seed) {
        SplittableRandom random = new SplittableRandom(seed ^ (id * 0x9E3779B97F4A7C15L));
        float[] values = new float[dims];
        for (int i = 0; i < dims; i++) {
            values[i] = (float) (random.nextDouble() * 2 - 1);
        }
        return new IdVector(id, values);
    }

    @Override
    public String toString() {
        return "IdVector{id=" + id + ", values=" + Arrays.toString(values) + '}';
    }
}
