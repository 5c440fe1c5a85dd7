package io.flinkdevices.samples.gpu;

import org.apache.flink.api.common.typeinfo.TypeInfo;

import java.util.Arrays;

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

    /**
     * The deterministic input vector number {@code id} of {@code dims} values in [-1, 1), on a
     * grid of 2^-23. Each value is an integer hash of the record's seed and its position, with no
     * state carried from one value to the next: 256 values cost about 0.19 us on the 2-core build
     * machine, where a random number generator per value took 0.27 to 0.44 us (the conversion to
     * float keeps Java 17's compiler from using vector instructions for either), so the job
     * measures its pipeline more than its test data.
     */
    public static IdVector generate(long id, int dims, long seed) {
        long z = seed ^ (id * 0x9E3779B97F4A7C15L);
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        int base = (int) (z ^ (z >>> 31));
        float[] values = new float[dims];
        for (int i = 0; i < dims; i++) {
            int h = (base + i) * 0x9E3779B9;
            h ^= h >>> 15;
            h *= 0x2C1B3C6D;
            h ^= h >>> 12;
            values[i] = (h >> 8) * 0x1.0p-23f;
        }
        return new IdVector(id, values);
    }

    @Override
    public String toString() {
        return "IdVector{id=" + id + ", values=" + Arrays.toString(values) + '}';
    }
}
