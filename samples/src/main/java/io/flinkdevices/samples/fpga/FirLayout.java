package io.flinkdevices.samples.fpga;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Lays out a batch of samples for the FIR kernel: one segment per sensor of the batch, holding the
 * sensor's last {@code taps - 1} samples from earlier batches followed by its samples of this
 * batch, plus each record's position in those segments. The segment's last {@code taps - 1}
 * samples become the sensor's history at once, so the next batch can be laid out while this one
 * is still on the device.
 *
 * <p>The layout is built in heap arrays and copied into the slot's direct buffer in bulk, several
 * times faster than one buffer access per value. Sensor ids are indexes into the counting arrays
 * directly (no lookup per record); an id outside 0..{@link SensorHistories#DENSE}-1 gets an index
 * once, through its history.
 */
final class FirLayout {

    private final int h;
    private final SensorHistories histories;
    private final float[] stageIn;
    private final int[] stagePos;
    private final int[] indexes;
    /** The batch's sensors as indexes, in order of first arrival in the batch. */
    private final int[] touched;
    /** Records of the batch per sensor index; 0 for sensors not in the batch. */
    private int[] counts = new int[16];
    /** Per sensor index: where its next sample goes in the layout. */
    private int[] cursors = new int[16];
    /** Per sensor index: its history, once it has been in a batch. */
    private SensorHistory[] byIndex = new SensorHistory[16];
    /** Indexes handed out to ids outside 0..DENSE-1. */
    private int otherIds;

    FirLayout(int taps, int batchSize, SensorHistories histories) {
        this.h = taps - 1;
        this.histories = histories;
        this.stageIn = new float[Math.multiplyExact(batchSize, taps)];
        this.stagePos = new int[batchSize];
        this.indexes = new int[batchSize];
        this.touched = new int[batchSize];
    }

    /**
     * Lays out records {@code 0..n-1} ({@code sensors[i]}, {@code values[i]}) into {@code input}:
     * positions as ints from byte 0, samples as floats from byte {@code samplesOffset}; both in
     * native byte order. Updates every sensor's history.
     */
    void layOut(int[] sensors, float[] values, int n, ByteBuffer input, int samplesOffset) {
        int[] ids = this.indexes;
        int[] counts = this.counts;
        int[] touched = this.touched;
        int batchSensors = 0;
        int limit = Math.min(counts.length, SensorHistories.DENSE);
        for (int i = 0; i < n; i++) {
            int id = sensors[i];
            if (id < 0 || id >= limit) {
                id = index(id);
                counts = this.counts;
                limit = Math.min(counts.length, SensorHistories.DENSE);
            }
            ids[i] = id;
            if (counts[id]++ == 0) {
                touched[batchSensors++] = id;
            }
        }
        int[] cursors = this.cursors;
        SensorHistory[] byIndex = this.byIndex;
        float[] stageIn = this.stageIn;
        int length = 0;
        for (int t = 0; t < batchSensors; t++) {
            int id = touched[t];
            SensorHistory s = byIndex[id];
            if (s == null) {
                s = histories.of(id); // an id in 0..DENSE-1: its index is the id
                byIndex[id] = s;
            }
            System.arraycopy(s.history, 0, stageIn, length, h);
            cursors[id] = length + h;
            length += h + counts[id];
        }
        int[] stagePos = this.stagePos;
        for (int i = 0; i < n; i++) {
            int p = cursors[ids[i]]++;
            stageIn[p] = values[i];
            stagePos[i] = p;
        }
        for (int t = 0; t < batchSensors; t++) {
            int id = touched[t];
            SensorHistory s = byIndex[id];
            // the segment's last h samples: the history the sensor's next batch starts from
            System.arraycopy(stageIn, cursors[id] - h, s.history, 0, h);
            s.seen += counts[id];
            counts[id] = 0;
        }
        input.duplicate().order(ByteOrder.nativeOrder()).asIntBuffer().put(0, stagePos, 0, n);
        input.slice(samplesOffset, input.capacity() - samplesOffset)
                .order(ByteOrder.nativeOrder())
                .asFloatBuffer()
                .put(0, stageIn, 0, length);
    }

    /**
     * The index of a sensor id that is not a valid index yet: an id in 0..DENSE-1 beyond the
     * arrays (they grow), or any other id (it gets {@code DENSE + k} once, through its history).
     */
    private int index(int sensor) {
        int index;
        SensorHistory other = null;
        if (sensor >= 0 && sensor < SensorHistories.DENSE) {
            index = sensor;
        } else {
            other = histories.of(sensor);
            if (other.index < 0) {
                other.index = SensorHistories.DENSE + otherIds++;
            }
            index = other.index;
        }
        if (index >= counts.length) {
            int size = Math.max(index + 1, counts.length * 2);
            counts = Arrays.copyOf(counts, size);
            cursors = Arrays.copyOf(cursors, size);
            byIndex = Arrays.copyOf(byIndex, size);
        }
        if (other != null) {
            byIndex[index] = other;
        }
        return index;
    }
}
