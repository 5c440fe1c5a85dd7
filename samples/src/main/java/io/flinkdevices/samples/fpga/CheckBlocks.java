package io.flinkdevices.samples.fpga;

import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;

/**
 * Checks every {@value #CHECK_EVERY}th filtered sample (by sensor and position, so the same ones
 * whatever the batching) against the CPU reference computed from {@link Fir#signal} directly.
 * Accumulators: {@code checked}, {@code exact} (bit-identical), {@code mismatches} (beyond {@link
 * Fir#tolerance}).
 */
final class CheckBlocks extends RichMapFunction<SampleBlock, SampleBlock> {

    private static final long serialVersionUID = 1L;

    static final int CHECK_EVERY = 97;

    private final float[] taps;
    private transient float tolerance;
    private transient LongCounter checked;
    private transient LongCounter exact;
    private transient LongCounter mismatches;

    CheckBlocks(float[] taps) {
        this.taps = taps.clone();
    }

    /** The reference output for a sample of the job's signal. */
    static float reference(float[] taps, int sensor, long seq) {
        float acc = 0f;
        for (int k = 0; k < taps.length; k++) {
            float x = seq - k >= 0 ? Fir.signal(sensor, seq - k) : 0f;
            acc += taps[k] * x;
        }
        return acc;
    }

    /** True for the samples that are checked. */
    static boolean isChecked(int sensor, long seq) {
        return (seq * 31 + sensor) % CHECK_EVERY == 0;
    }

    @Override
    public void open(OpenContext ctx) {
        tolerance = Fir.tolerance(taps, 1.1f);
        checked = getRuntimeContext().getLongCounter("checked");
        exact = getRuntimeContext().getLongCounter("exact");
        mismatches = getRuntimeContext().getLongCounter("mismatches");
    }

    @Override
    public SampleBlock map(SampleBlock block) {
        int[] sensors = block.sensors;
        long[] seqs = block.seqs;
        float[] values = block.values;
        for (int i = 0; i < block.count; i++) {
            if (isChecked(sensors[i], seqs[i])) {
                check(sensors[i], seqs[i], values[i]);
            }
        }
        return block;
    }

    /** Checks one output; also for the per-record job's samples. */
    void check(int sensor, long seq, float value) {
        checked.add(1);
        float expected = reference(taps, sensor, seq);
        if (Float.floatToIntBits(expected) == Float.floatToIntBits(value)) {
            exact.add(1);
        } else if (!(Math.abs(expected - value) <= tolerance)) {
            mismatches.add(1);
        }
    }
}
