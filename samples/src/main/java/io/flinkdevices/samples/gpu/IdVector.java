package io.flinkdevices.samples.gpu;

import org.apache.flink.api.common.typeinfo.TypeInfo;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * A record of the GPU sample job: an id and a vector of floats. Where it crosses the network Flink
 * serializes it with {@link IdVectorSerializer} (named by {@code @TypeInfo}): the floats as one
 * block, never through Kryo.
 */
@TypeInfo(IdVectorTypeInfo.Factory.class)
public final class IdVector {

    /** Identifies the record; the product keeps the id of its input vector. */
    public long id;

    /** The vector. */
    public float[] values;

    /** An empty record (id 0, no values). */
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
