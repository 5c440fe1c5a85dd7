package io.flinkdevices.samples.fpga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class FirTest {

    @Test
    @DisplayName("the low-pass filter passes a constant signal unchanged once its history is full")
    void unitGainAtDc() {
        float[] taps = Fir.lowPass(33);
        float[] ones = new float[100];
        java.util.Arrays.fill(ones, 1f);
        float[] ys = Fir.filter(taps, ones);
        assertThat(ys[99]).isCloseTo(1f, org.assertj.core.data.Offset.offset(1e-5f));
        assertThat(ys[0]).isEqualTo(taps[0]); // only one sample seen: the rest of the history is zero
    }

    @Test
    @DisplayName("filtering sample by sample with a carried history equals filtering the whole stream")
    void streamingEqualsWholeStream() {
        float[] taps = Fir.lowPass(17);
        float[] xs = new float[200];
        for (int i = 0; i < xs.length; i++) {
            xs[i] = Fir.signal(3, i);
        }
        SensorHistory slot = new SensorHistory(3, new float[taps.length - 1]);
        float[] streamed = new float[xs.length];
        for (int i = 0; i < xs.length; i++) {
            streamed[i] = slot.push(taps, xs[i]);
        }
        assertThat(streamed).containsExactly(Fir.filter(taps, xs));
    }

    @Test
    @DisplayName("a filter without taps is refused")
    void noTaps() {
        assertThatThrownBy(() -> Fir.lowPass(0)).hasMessageContaining("at least 1 tap");
    }

    @Test
    @DisplayName("the sensor map finds every sensor again after growing")
    void slotMapGrows() {
        SensorHistories map = new SensorHistories(0);
        for (int s = -500; s < 500; s += 3) {
            map.put(new SensorHistory(s, new float[0]));
        }
        for (int s = -500; s < 500; s++) {
            SensorHistory slot = map.get(s);
            if ((s + 500) % 3 == 0) {
                assertThat(slot).isNotNull().extracting(x -> x.sensor).isEqualTo(s);
            } else {
                assertThat(slot).isNull();
            }
        }
        for (int s : new int[] {1 << 16, 1_000_000, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
            map.put(new SensorHistory(s, new float[0]));
        }
        assertThat(map.get(1_000_000).sensor).isEqualTo(1_000_000);
        assertThat(map.get(Integer.MAX_VALUE).sensor).isEqualTo(Integer.MAX_VALUE);
        assertThat(map.get(Integer.MIN_VALUE).sensor).isEqualTo(Integer.MIN_VALUE);
        assertThat(map.get(1_000_001)).isNull();
        assertThat(map.all()).hasSize(338);
    }

    @Test
    @DisplayName("the test signal stays within [-1.1, 1.1], swings through most of it, and differs from sensor to sensor")
    void signalRange() {
        float min = Float.MAX_VALUE;
        float max = -Float.MAX_VALUE;
        for (long seq : new long[] {0, 1, 2, 1_000_000_007L, 1L << 40}) {
            for (int i = 0; i < 1000; i++) {
                float x = Fir.signal(5, seq + i);
                min = Math.min(min, x);
                max = Math.max(max, x);
            }
        }
        assertThat(min).isBetween(-1.1f, -0.8f);
        assertThat(max).isBetween(0.8f, 1.1f);
        assertThat(Fir.signal(1, 10)).isNotEqualTo(Fir.signal(2, 10));
    }
}
