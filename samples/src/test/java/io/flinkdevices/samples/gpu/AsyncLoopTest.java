package io.flinkdevices.samples.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.job.batch.BatchBackend;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;

/** The harness's asynchronous loop, on a CPU stand-in for the GPU backend. */
class AsyncLoopTest {

    /**
     * Computes a slot's batch in {@code start} with {@link CpuMatVec}'s sums and, like a device
     * still busy, keeps the products to itself until {@code finish}: a loop that reads a slot before
     * finishing it, or reads another slot's products, sees wrong numbers.
     */
    static final class DeferredCpuBackend implements BatchBackend {
        private final Matrix m;
        private final int batchSize;
        private final ByteBuffer[] in;
        private final ByteBuffer[] out;
        private final float[][] pending;
        private final int[] pendingCount;
        int started;

        DeferredCpuBackend(Matrix m, int batchSize, int slots) {
            this.m = m;
            this.batchSize = batchSize;
            in = new ByteBuffer[slots];
            out = new ByteBuffer[slots];
            pending = new float[slots][];
            pendingCount = new int[slots];
            for (int s = 0; s < slots; s++) {
                in[s] = ByteBuffer.allocateDirect(batchSize * m.cols() * 4).order(ByteOrder.nativeOrder());
                out[s] = ByteBuffer.allocateDirect(batchSize * m.rows() * 4).order(ByteOrder.nativeOrder());
            }
        }

        @Override
        public int slots() {
            return in.length;
        }

        @Override
        public int batchSize() {
            return batchSize;
        }

        @Override
        public int inputRecordBytes() {
            return m.cols() * 4;
        }

        @Override
        public int outputRecordBytes() {
            return m.rows() * 4;
        }

        @Override
        public ByteBuffer input(int slot) {
            return in[slot];
        }

        @Override
        public ByteBuffer output(int slot) {
            return out[slot];
        }

        @Override
        public void start(int slot, int records) {
            assertThat(pending[slot]).as("slot %d started twice without finish", slot).isNull();
            FloatBuffer x = in[slot].asFloatBuffer();
            float[] v = new float[m.cols()];
            float[] products = new float[records * m.rows()];
            for (int k = 0; k < records; k++) {
                x.get(k * m.cols(), v);
                System.arraycopy(m.multiplyNaive(v), 0, products, k * m.rows(), m.rows());
            }
            pending[slot] = products;
            pendingCount[slot] = records;
            // What the task would read before finish: garbage.
            out[slot].asFloatBuffer().put(0, new float[batchSize * m.rows()]).put(0, Float.NaN);
            started++;
        }

        @Override
        public int finish(int slot) {
            if (pending[slot] == null) {
                return 0;
            }
            out[slot].asFloatBuffer().put(0, pending[slot]);
            int n = pendingCount[slot];
            pending[slot] = null;
            return n;
        }

        @Override
        public String describe() {
            return "CPU stand-in";
        }

        @Override
        public void close() {}
    }

    @Test
    @DisplayName("the loop keeps several slots in flight, reads a slot's products only after finishing it, and counts them")
    void loopReadsFinishedSlotsOnly() throws Exception {
        Matrix m = Matrix.generate(16, 16, 4);
        float[][] vectors = new float[37][];
        for (int i = 0; i < vectors.length; i++) {
            vectors[i] = IdVector.generate(i, 16, 5).values;
        }
        for (int slots : new int[] {1, 2, 3}) {
            DeferredCpuBackend b = new DeferredCpuBackend(m, 8, slots);

            MatVecThroughput.Row row = AsyncLoop.measure(b, m, vectors, 0.05);

            assertThat(row.slots).isEqualTo(slots);
            assertThat(row.records).isPositive().isEqualTo(row.records / 8 * 8);
            assertThat(row.maxError).as("products read from the right slot, after finish").isLessThanOrEqualTo(m.tolerance());
            assertThat((Object[]) b.pending).as("every started slot finished at the end").containsOnlyNulls();
        }
    }
}
