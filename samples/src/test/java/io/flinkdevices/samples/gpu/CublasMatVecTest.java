package io.flinkdevices.samples.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.flinkdevices.sdk.info.GpuInfo;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The GPU path; the device test runs only where CUDA starts on GPU 0, skipped with the reason elsewhere. */
class CublasMatVecTest {

    @Test
    @DisplayName("a CUDA UUID is written as nvidia-smi prints it, so a driver's GpuInfo finds its CUDA device")
    void uuidLikeNvidiaSmi() {
        byte[] b = new byte[16];
        for (int i = 0; i < 16; i++) {
            b[i] = (byte) (0xf0 + i);
        }
        assertThat(CudaDevices.formatUuid(b)).isEqualTo("GPU-f0f1f2f3-f4f5-f6f7-f8f9-fafbfcfdfeff");
        assertThat(CudaDevices.formatUuid(new byte[3])).isNull();
    }

    @Test
    @DisplayName("on an NVIDIA GPU, one cublasSgemm per batch gives the products within float rounding")
    void gpuProductsMatchReference() {
        Matrix m = Matrix.generate(96, 80, 9);
        GpuOpened opened = CublasMatVec.open(GpuInfo.builder("nvidia", 0).build(), m, 64);
        if (opened.backend == null) {
            System.out.println("GPU path test skipped: " + opened.reason);
        }
        Assumptions.assumeTrue(opened.backend != null, () -> "no usable NVIDIA GPU: " + opened.reason);
        try (MatVecBackend gpu = opened.backend) {
            long id = 0;
            for (int count : new int[] {64, 17, 1}) {
                float[][] xs = new float[count][];
                for (int k = 0; k < count; k++) {
                    xs[k] = IdVector.generate(id++, 80, 5).values;
                    gpu.input().put(k * 80, xs[k]);
                }
                gpu.multiply(count);
                for (int k = 0; k < count; k++) {
                    float[] y = new float[96];
                    gpu.output().get(k * 96, y);
                    double[] exact = m.multiplyExact(xs[k]);
                    for (int r = 0; r < 96; r++) {
                        assertThat((double) y[r]).isCloseTo(exact[r], within(m.tolerance()));
                    }
                }
            }
        }
    }
}
