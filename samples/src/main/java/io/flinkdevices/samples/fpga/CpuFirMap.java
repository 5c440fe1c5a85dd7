package io.flinkdevices.samples.fpga;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.ValueState;

/**
 * The plain Flink way to filter the same streams: a per-record {@code map} on a stream keyed by
 * sensor, the sensor's last {@code taps - 1} samples in keyed state, the same arithmetic as the
 * kernel on the CPU. The baseline of {@link FirThroughput}.
 */
public final class CpuFirMap extends RichMapFunction<SensorSample, SensorSample> {

    private static final long serialVersionUID = 1L;

    private final float[] taps;
    private transient ValueState<float[]> history;

    /** Filters with {@code taps}. */
    public CpuFirMap(float[] taps) {
        this.taps = taps.clone();
    }

    @Override
    public void open(OpenContext ctx) {
        history = getRuntimeContext().getState(FirBatchOperator.HISTORY);
    }

    @Override
    public SensorSample map(SensorSample x) throws Exception {
        float[] h = history.value();
        if (h == null) {
            h = new float[taps.length - 1];
        }
        FirBatchOperator.Slot slot = new FirBatchOperator.Slot(x.sensor, h);
        float y = slot.push(taps, x.value);
        history.update(h);
        x.value = y; // as the batched operator does: the input record carries the result out
        return x;
    }
}
