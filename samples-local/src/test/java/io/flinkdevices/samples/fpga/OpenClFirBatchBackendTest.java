package io.flinkdevices.samples.fpga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.info.FpgaInfo;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.ByteOrder;

class OpenClFirBatchBackendTest {

    /**
     * Two sensors' streams in batches through every slot in turn, up to all slots in flight before
     * the oldest is finished; the outputs in order.
     */
    private static float[][] viaBackend(OpenClFirBatchBackend backend, float[] taps, float[][] xs, int batch) throws Exception {
        int sensors = xs.length;
        int length = xs[0].length;
        FirLayout layout = new FirLayout(taps.length, backend.batchSize(), new SensorHistories(taps.length - 1));
        float[][] ys = new float[sensors][length];
        int[][] slotSensors = new int[backend.slots()][batch];
        int[][] slotSeqs = new int[backend.slots()][batch];
        int[] slotCounts = new int[backend.slots()];
        int total = sensors * length;
        int next = 0;
        int slot = 0;
        int inFlight = 0;
        int oldest = 0;
        while (next < total || inFlight > 0) {
            if (next < total && inFlight < backend.slots()) {
                int n = Math.min(batch, total - next);
                float[] values = new float[n];
                for (int i = 0; i < n; i++, next++) {
                    slotSensors[slot][i] = next % sensors;
                    slotSeqs[slot][i] = next / sensors;
                    values[i] = xs[next % sensors][next / sensors];
                }
                slotCounts[slot] = n;
                layout.layOut(slotSensors[slot], values, n, backend.input(slot), backend.samplesOffset());
                backend.start(slot, n);
                inFlight++;
                slot = (slot + 1) % backend.slots();
            } else {
                backend.finish(oldest);
                var out = backend.output(oldest).order(ByteOrder.nativeOrder()).asFloatBuffer();
                for (int i = 0; i < slotCounts[oldest]; i++) {
                    ys[slotSensors[oldest][i]][slotSeqs[oldest][i]] = out.get(i);
                }
                inFlight--;
                oldest = (oldest + 1) % backend.slots();
            }
        }
        return ys;
    }

    @Test
    @DisplayName("on PoCL, with 3 batches in flight, the outputs equal the CPU reference bit for bit across batch boundaries")
    void backendEqualsReference() throws Exception {
        FpgaInfo device = OpenClAvailability.require(OpenClAvailability.POCL).info;
        float[] taps = Fir.lowPass(64);
        float[][] xs = new float[2][700];
        for (int s = 0; s < 2; s++) {
            for (int i = 0; i < xs[s].length; i++) {
                xs[s][i] = Fir.signal(s, i);
            }
        }
        try (OpenClFirBatchBackend backend = OpenClFirBatchBackend.open(device, taps, new FirBatchArgs(96, 3, 60_000), null, null)) {
            assertThat(backend.describe()).contains("Portable Computing Language").contains("3 slot(s) of 96 samples");
            float[][] ys = viaBackend(backend, taps, xs, 96);
            for (int s = 0; s < 2; s++) {
                assertThat(ys[s]).as("sensor %d", s).containsExactly(Fir.filter(taps, xs[s]));
            }
        }
    }

    @Test
    @DisplayName("on oclgrind (blocking commands under the process-wide lock) the outputs equal the CPU reference")
    void oclgrindEqualsReference() throws Exception {
        FpgaInfo device = OpenClAvailability.require(OpenClAvailability.OCLGRIND).info;
        float[] taps = Fir.lowPass(5);
        float[][] xs = {{0.5f, -1f, 0.25f, 1f, 0f, 0.75f, -0.5f, 0.125f, 1f, -1f}};
        try (OpenClFirBatchBackend backend = OpenClFirBatchBackend.open(device, taps, new FirBatchArgs(4, 2, 60_000), null, null)) {
            assertThat(viaBackend(backend, taps, xs, 4)[0]).containsExactly(Fir.filter(taps, xs[0]));
        }
    }

    @Test
    @DisplayName("a slot started twice without finish, or a record count beyond the batch, is refused with what was wrong")
    void misuse() throws Exception {
        FpgaInfo device = OpenClAvailability.require(OpenClAvailability.POCL).info;
        float[] taps = Fir.lowPass(4);
        try (OpenClFirBatchBackend backend = OpenClFirBatchBackend.open(device, taps, new FirBatchArgs(8, 2, 60_000), null, null)) {
            assertThatThrownBy(() -> backend.start(0, 9)).hasMessage("records must be in 1..8 but is 9");
            backend.input(0).order(ByteOrder.nativeOrder()).putInt(0, 3);
            backend.start(0, 1);
            assertThatThrownBy(() -> backend.start(0, 1)).hasMessageContaining("slot 0 is still in flight");
            backend.finish(0);
            backend.finish(0); // nothing in flight: returns at once
        }
    }
}
