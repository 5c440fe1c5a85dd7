package io.flinkdevices.samples.fpga;

/**
 * One sensor's filter state: the {@code taps - 1} samples the next one is filtered with, oldest
 * first, and how many samples of the sensor have been filtered. It is also the form the state is
 * checkpointed in (a Flink POJO; the transient fields are bookkeeping of the running operator).
 */
public final class SensorHistory {

    /** The sensor. */
    public int sensor;

    /** Samples of the sensor filtered so far; of two copies of a sensor's state, the larger wins. */
    public long seen;

    /** The last {@code taps - 1} samples, oldest first. */
    public float[] history;

    /** For an id outside 0..{@link SensorHistories#DENSE}-1: its index in the layout's arrays, -1 until it has one. */
    transient int index = -1;

    /** For Flink's POJO serializer. */
    public SensorHistory() {}

    SensorHistory(int sensor, float[] history) {
        this.sensor = sensor;
        this.history = history;
    }

    /** A copy, for a snapshot. */
    SensorHistory copy() {
        SensorHistory c = new SensorHistory(sensor, history.clone());
        c.seen = seen;
        return c;
    }

    /** The CPU path: filters one sample and shifts it into the history. */
    float push(float[] taps, float x) {
        float y = Fir.output(taps, history, x);
        int h = history.length;
        if (h > 0) {
            System.arraycopy(history, 1, history, 0, h - 1);
            history[h - 1] = x;
        }
        seen++;
        return y;
    }
}
