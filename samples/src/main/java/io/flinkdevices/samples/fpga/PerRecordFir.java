package io.flinkdevices.samples.fpga;

import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The plain Flink way to run the same filter, the baseline the batched job is measured against:
 * one source subtask emits one {@link SensorSample} per sample, keyed by sensor across the network
 * to a per-record {@link CpuFirMap}, then checked as the batched job checks.
 */
public final class PerRecordFir {

    private PerRecordFir() {}

    /** The whole per-record pipeline, checked: source, keyBy, {@link CpuFirMap}, check. */
    public static DataStream<SensorSample> filtered(StreamExecutionEnvironment env, long samples, int sensors, float[] taps) {
        return samples(env, samples, sensors)
                .keyBy(s -> s.sensor, TypeInformation.of(Integer.class))
                .map(new CpuFirMap(taps))
                .name("FIR filter (per-record map)")
                .map(new Check(taps))
                .name("Check against the CPU reference");
    }

    /** One source subtask: every sensor's samples in order, round robin over the sensors. */
    public static DataStream<SensorSample> samples(StreamExecutionEnvironment env, long samples, int sensors) {
        return env.fromSequence(0, samples - 1).setParallelism(1).map(new Generate(sensors)).setParallelism(1);
    }

    /** Sample number {@code i} of the stream: sensor {@code i mod sensors}. */
    static final class Generate implements MapFunction<Long, SensorSample> {
        private static final long serialVersionUID = 1L;
        private final int sensors;

        Generate(int sensors) {
            this.sensors = sensors;
        }

        @Override
        public SensorSample map(Long i) {
            int sensor = (int) (i % sensors);
            long seq = i / sensors;
            return new SensorSample(sensor, seq, Fir.signal(sensor, seq));
        }
    }

    /** {@link CheckBlocks}' check, one sample at a time. */
    static final class Check extends RichMapFunction<SensorSample, SensorSample> {
        private static final long serialVersionUID = 1L;
        private final CheckBlocks check;

        Check(float[] taps) {
            this.check = new CheckBlocks(taps);
        }

        @Override
        public void open(OpenContext ctx) throws Exception {
            check.setRuntimeContext(getRuntimeContext());
            check.open(ctx);
        }

        @Override
        public SensorSample map(SensorSample y) {
            if (CheckBlocks.isChecked(y.sensor, y.seq)) {
                check.check(y.sensor, y.seq, y.value);
            }
            return y;
        }
    }
}
