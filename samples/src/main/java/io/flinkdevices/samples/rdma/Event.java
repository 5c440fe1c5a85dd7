package io.flinkdevices.samples.rdma;

/** An event of the RDMA sample: a key of the feature table and a value; after enrichment, its score. */
public final class Event implements java.io.Serializable {
    private static final long serialVersionUID = 1L;

    /** Sequence number, for checks. */
    public long seq;
    /** The feature table's key. */
    public long key;
    /** The event's own value. */
    public float value;
    /** {@link FeatureTable#score} of the key's vector and the value; set by the enrichment. */
    public float score;

    /** For Flink's POJO serializer. */
    public Event() {}

    Event(long seq, long key, float value) {
        this.seq = seq;
        this.key = key;
        this.value = value;
    }

    /** The event of sequence number {@code seq} in a table of {@code keys} keys. */
    static Event generate(long seq, int keys) {
        long key = Math.floorMod(seq * 0x9E3779B97F4A7C15L, (long) keys);
        float value = 1f + (seq % 13) / 4f;
        return new Event(seq, key, value);
    }
}
