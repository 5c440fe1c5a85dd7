package io.flinkdevices.samples.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.ByteOrder;

class CpuMatVecTest {

    @Test
    @DisplayName("the CPU path's products equal the naive reference exactly, batch after batch")
    void equalsNaiveReference() {
        Matrix m = Matrix.generate(7, 5, 3);
        try (CpuMatVec cpu = new CpuMatVec(m, 4)) {
            assertThat(cpu.input().isDirect()).isTrue();
            assertThat(cpu.input().order()).isEqualTo(ByteOrder.nativeOrder());
            long id = 0;
            // A full batch, then a partial one that reuses the buffers.
            for (int count : new int[] {4, 3}) {
                float[][] xs = new float[count][];
                for (int k = 0; k < count; k++) {
                    xs[k] = IdVector.generate(id++, 5, 11).values;
                    cpu.input().put(k * 5, xs[k]);
                }
                cpu.multiply(count);
                for (int k = 0; k < count; k++) {
                    float[] y = new float[7];
                    cpu.output().get(k * 7, y);
                    assertThat(y).as("product %d of a batch of %d", k, count).containsExactly(m.multiplyNaive(xs[k]));
                }
            }
        }
    }

    @Test
    @DisplayName("the naive reference is the textbook product")
    void naiveReferenceIsTheProduct() {
        Matrix m = Matrix.generate(2, 3, 5);
        float[] x = {1f, 0f, -2f};
        assertThat(m.multiplyNaive(x))
                .containsExactly(m.get(0, 0) - 2 * m.get(0, 2), m.get(1, 0) - 2 * m.get(1, 2));
        assertThat(m.columnMajor()[1]).isEqualTo(m.get(1, 0));
    }
}
