package io.flinkdevices.samples.fpga;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;

/**
 * The plain Flink way to filter the same streams: a per-record {@code map} on a stream keyed by
 * sensor, the sensor's last {@code taps - 1} samples in keyed state, the same arithmetic as the
 * kernel on the CPU. The baseline the batched job is measured against ({@link PerRecordFir}).
 */
public final class CpuFirMap extends RichMapFunction<SensorSample, SensorSample> {

    private static final long serialVersionUID = 1L;

    static final ValueStateDescriptor<float[]> HISTORY =
            new ValueStateDescriptor<>("fir-history", PrimitiveArrayTypeInfo.FLOAT_PRIMITIVE_ARRAY_TYPE_INFO);

    private final float[] taps;
    private transient ValueState<float[]> history;

    /** Filters with {@code taps}. */
    public CpuFirMap(float[] taps) {
        this.taps = taps.clone();
    }

    @Override
    public void open(OpenContext ctx) {
        history = getRuntimeContext().getState(HISTORY);
    }

    @Override
    public SensorSample map(SensorSample x) throws Exception {
        float[] h = history.value();
        if (h == null) {
            h = new float[taps.length - 1];
        }
        float y = new SensorHistory(x.sensor, h).push(taps, x.value);
        history.update(h);
        x.value = y; // the input record carries the result out
        return x;
    }
}
