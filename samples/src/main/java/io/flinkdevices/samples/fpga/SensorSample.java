package io.flinkdevices.samples.fpga;

/**
 * One sample of one sensor: the FIR sample job's input and output record (a Flink POJO: public
 * fields and a no-arg constructor, so Flink serializes it without Kryo). The filtered sample keeps
 * the sensor and sequence number of its input sample.
 */
public final class SensorSample {

    /** The sensor (stream) this sample belongs to; samples are filtered per sensor. */
    public int sensor;

    /** Position of the sample in its sensor's stream, from 0. */
    public long seq;

    /** The value. */
    public float value;

    /** For Flink's POJO serializer. */
    public SensorSample() {}

    /** A sample. */
    public SensorSample(int sensor, long seq, float value) {
        this.sensor = sensor;
        this.seq = seq;
        this.value = value;
    }

    @Override
    public String toString() {
        return "SensorSample{sensor=" + sensor + ", seq=" + seq + ", value=" + value + '}';
    }
}
