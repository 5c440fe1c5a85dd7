package io.flinkdevices.samples.fpga;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

class FirLayoutTest {

    /** What the kernel computes on a laid-out batch: out[i] = sum_k taps[k] * in[pos[i] - k]. */
    private static float[] kernel(float[] taps, ByteBuffer input, int samplesOffset, int n) {
        ByteBuffer b = input.duplicate().order(ByteOrder.nativeOrder());
        float[] out = new float[n];
        for (int i = 0; i < n; i++) {
            int p = b.getInt(4 * i);
            float acc = 0f;
            for (int k = 0; k < taps.length; k++) {
                acc += taps[k] * b.getFloat(samplesOffset + 4 * (p - k));
            }
            out[i] = acc;
        }
        return out;
    }

    @Test
    @DisplayName("batches laid out one after the other (sparse ids, sensors coming and going) filter like each whole stream")
    void layoutEqualsReference() {
        float[] taps = Fir.lowPass(13);
        int batch = 37;
        int[] ids = {0, 5, -7, 70_000, 123_456_789, 3};
        Random random = new Random(7);
        Map<Integer, List<Float>> inputs = new HashMap<>();
        Map<Integer, List<Float>> outputs = new HashMap<>();
        FirLayout layout = new FirLayout(taps.length, batch, new SensorHistories(taps.length - 1));
        ByteBuffer input = ByteBuffer.allocateDirect(4 * batch + 4 * batch * taps.length);
        for (int round = 0; round < 60; round++) {
            int n = 1 + random.nextInt(batch);
            int[] sensors = new int[n];
            float[] values = new float[n];
            for (int i = 0; i < n; i++) {
                // sensor 3 only in later batches; the others at random
                sensors[i] = ids[random.nextInt(round < 20 ? ids.length - 1 : ids.length)];
                List<Float> xs = inputs.computeIfAbsent(sensors[i], s -> new ArrayList<>());
                values[i] = Fir.signal(sensors[i] & 0xff, xs.size());
                xs.add(values[i]);
            }
            layout.layOut(sensors, values, n, input, 4 * batch);
            float[] out = kernel(taps, input, 4 * batch, n);
            for (int i = 0; i < n; i++) {
                outputs.computeIfAbsent(sensors[i], s -> new ArrayList<>()).add(out[i]);
            }
        }
        for (int id : ids) {
            float[] xs = toArray(inputs.get(id));
            assertThat(toArray(outputs.get(id))).as("sensor %d", id).containsExactly(Fir.filter(taps, xs));
        }
    }

    private static float[] toArray(List<Float> list) {
        float[] a = new float[list.size()];
        for (int i = 0; i < a.length; i++) {
            a[i] = list.get(i);
        }
        return a;
    }
}
