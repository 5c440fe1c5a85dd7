package io.flinkdevices.samples.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.info.GpuInfo;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class MatVecBackendsTest {

    private static final Matrix M = Matrix.generate(8, 8, 1);

    @Test
    @DisplayName("a GPU that is not NVIDIA's gets the CPU path with the vendor named")
    void otherVendorUsesCpu() {
        GpuInfo sim = GpuInfo.builder("simulated", 1).uuid("SIM-GPU-1").build();
        MatVecBackends.Choice c = MatVecBackends.choose(sim, M, 16);
        try (MatVecBackend b = c.backend) {
            assertThat(b.path()).isEqualTo(MatVecBackend.Path.CPU);
            assertThat(c.cpuReason).contains("GPU #1 SIM-GPU-1").contains("'simulated'").contains("not an NVIDIA");
        }
    }

    @Test
    @DisplayName("a subtask without a GPU gets the CPU path")
    void noGpuUsesCpu() {
        MatVecBackends.Choice c = MatVecBackends.choose(null, M, 16);
        assertThat(c.backend.path()).isEqualTo(MatVecBackend.Path.CPU);
        assertThat(c.cpuReason).isEqualTo("this TaskManager received no GPU");
    }

    @Test
    @DisplayName("an NVIDIA GPU gets the GPU path where CUDA starts, else the CPU path with CUDA's reason, never an Error")
    void nvidiaUsesGpuOrSaysWhyNot() {
        GpuInfo gpu = GpuInfo.builder("nvidia", 0).build();
        MatVecBackends.Choice c = MatVecBackends.choose(gpu, M, 16);
        try (MatVecBackend b = c.backend) {
            if (GpuAvailability.reasonWhyNot() == null) {
                assertThat(b.path()).isEqualTo(MatVecBackend.Path.GPU);
                assertThat(c.cpuReason).isNull();
            } else {
                System.out.println("no GPU here; CPU path because " + c.cpuReason);
                assertThat(b.path()).isEqualTo(MatVecBackend.Path.CPU);
                assertThat(c.cpuReason)
                        .startsWith("GPU #0: ")
                        .containsAnyOf("cudaGetDeviceCount", "could not be loaded", "not among");
            }
        }
    }
}
