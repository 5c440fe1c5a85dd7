package io.flinkdevices.samples.fpga;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Sensor id to {@link SensorHistory}: ids 0..{@value #DENSE}-1, the usual case, by index; other
 * ids by open addressing on ints. No boxing per record.
 */
final class SensorHistories {

    /** Sensors 0..DENSE-1 are found by index. */
    static final int DENSE = 1 << 16;

    private final int historyLength;
    private SensorHistory[] dense = new SensorHistory[16];
    private SensorHistory[] table = new SensorHistory[64];
    private int size;

    /** Histories of {@code historyLength} samples ({@code taps - 1}). */
    SensorHistories(int historyLength) {
        this.historyLength = historyLength;
    }

    /** The sensor's history, created (zeros) on first use. */
    SensorHistory of(int sensor) {
        SensorHistory s = get(sensor);
        if (s == null) {
            s = new SensorHistory(sensor, new float[historyLength]);
            put(s);
        }
        return s;
    }

    SensorHistory get(int sensor) {
        if (sensor >= 0 && sensor < dense.length) {
            return dense[sensor];
        }
        if (sensor >= 0 && sensor < DENSE) {
            return null; // dense sensors are always in the dense array
        }
        int mask = table.length - 1;
        for (int i = mix(sensor) & mask; ; i = (i + 1) & mask) {
            SensorHistory s = table[i];
            if (s == null || s.sensor == sensor) {
                return s;
            }
        }
    }

    /**
     * Adds a restored history: of two for the same sensor (every subtask restores every sensor's
     * state), the one that has seen more samples wins. Histories of another length (the job's
     * taps changed) are ignored.
     */
    void restore(SensorHistory h) {
        if (h.history == null || h.history.length != historyLength) {
            return;
        }
        SensorHistory current = get(h.sensor);
        if (current == null || current.seen < h.seen) {
            put(h);
        }
    }

    void put(SensorHistory slot) {
        int sensor = slot.sensor;
        if (sensor >= 0 && sensor < DENSE) {
            if (sensor >= dense.length) {
                dense = Arrays.copyOf(dense, Math.min(DENSE, Math.max(dense.length * 2, Integer.highestOneBit(sensor) * 2)));
            }
            if (dense[sensor] == null) {
                size++;
            }
            dense[sensor] = slot;
            return;
        }
        if ((size + 1) * 2 > table.length) {
            SensorHistory[] old = table;
            table = new SensorHistory[old.length * 2];
            for (SensorHistory s : old) {
                if (s != null) {
                    insert(s);
                }
            }
        }
        if (insert(slot)) {
            size++;
        }
    }

    /** Returns true when the sensor was new. */
    private boolean insert(SensorHistory slot) {
        int mask = table.length - 1;
        for (int i = mix(slot.sensor) & mask; ; i = (i + 1) & mask) {
            if (table[i] == null || table[i].sensor == slot.sensor) {
                boolean added = table[i] == null;
                table[i] = slot;
                return added;
            }
        }
    }

    List<SensorHistory> all() {
        List<SensorHistory> out = new ArrayList<>(size);
        for (SensorHistory s : dense) {
            if (s != null) {
                out.add(s);
            }
        }
        for (SensorHistory s : table) {
            if (s != null) {
                out.add(s);
            }
        }
        return out;
    }

    private static int mix(int x) {
        int h = x * 0x9E3779B9;
        return h ^ (h >>> 16);
    }

    @Override
    public String toString() {
        return "SensorHistories" + Arrays.toString(all().stream().mapToInt(s -> s.sensor).toArray());
    }
}
