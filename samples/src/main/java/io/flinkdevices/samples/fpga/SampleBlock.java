package io.flinkdevices.samples.fpga;

/**
 * A block of sensor samples in primitive arrays: the FIR job's record between source, filter and
 * check. One record per block instead of one object per sample is what lets the pipeline keep up
 * with the device: no per-sample object, virtual call or serializer call, and arrays the filter
 * copies in bulk. A Flink POJO (public fields, no-arg constructor), so it crosses the network
 * without Kryo where it must; in the job it does not (source, filter and check are chained).
 *
 * <p>Sample {@code i < count} is sensor {@code sensors[i]}'s sample number {@code seqs[i]}, of
 * value {@code values[i]}; a sensor's samples are in order within a block and from block to block.
 */
public final class SampleBlock {

    /** Samples in the block; the arrays may be longer. */
    public int count;

    /** Each sample's sensor. */
    public int[] sensors;

    /** Each sample's position in its sensor's stream, from 0. */
    public long[] seqs;

    /** Each sample's value (after the filter: the filtered value). */
    public float[] values;

    /** For Flink's POJO serializer. */
    public SampleBlock() {}

    /** An empty block with room for {@code capacity} samples. */
    public SampleBlock(int capacity) {
        this.sensors = new int[capacity];
        this.seqs = new long[capacity];
        this.values = new float[capacity];
    }

    @Override
    public String toString() {
        return "SampleBlock{" + count + " samples}";
    }
}
