package io.flinkdevices.samples.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.info.GpuInfo;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The sample's own CUDA kernel. The device tests run only where CUDA opens GPU 0, skipped with
 * the reason elsewhere; the others need no GPU.
 */
class CudaKernelMatVecTest {

    @Test
    @DisplayName("the shipped PTX is the kernel of src/main/cuda/matvec.cu, with a PTX version drivers before CUDA 13 accept")
    void ptxMatchesTheSource() throws Exception {
        String ptx = new String(CudaKernelMatVec.ptx(), StandardCharsets.UTF_8);
        String cu = Files.readString(Path.of("src/main/cuda/matvec.cu"));

        assertThat(ptx).endsWith("\0").contains(".version 6.4").contains(".target sm_75").contains(".entry matvec(");
        int ptxParams = count(Pattern.compile("\\.param \\.(u64|u32) matvec_param_\\d+").matcher(ptx));
        Matcher signature = Pattern.compile("void matvec\\(([^)]*)\\)").matcher(cu);
        assertThat(signature.find()).as("matvec.cu declares matvec").isTrue();
        assertThat(ptxParams)
                .as("the PTX takes as many parameters as the kernel in matvec.cu (regenerate it after editing the .cu)")
                .isEqualTo(signature.group(1).split(",").length)
                .isEqualTo(6);
        assertThat(cu).contains("__fmul_rn").contains("__fadd_rn");
        assertThat(ptx).contains("mul.rn.f32").contains("add.rn.f32").doesNotContain("fma.rn.f32");
    }

    @Test
    @DisplayName("a batch larger than one launch can take is refused with the limit, before CUDA is touched")
    void batchLimits() {
        Matrix m = Matrix.generate(8, 8, 1);
        GpuInfo gpu = GpuInfo.builder("nvidia", 0).build();

        assertThat(CudaKernelMatVec.open(gpu, m, 65_536).reason).isEqualTo("the CUDA kernel takes batches of 1 to 65535 vectors, not 65536");
        assertThat(CudaKernelMatVec.open(gpu, m, 0).reason).contains("not 0");
    }

    @Test
    @DisplayName("a native library that fails to load is reported by the dynamic linker's line, not JCuda's nested stack traces")
    void nativeReasonIsOneLine() {
        UnsatisfiedLinkError e =
                new UnsatisfiedLinkError(
                        "Error while loading native library \"JCublas2-12.6.0-linux-x86_64\"\n"
                                + "Stack trace from the attempt to load the library as a resource:\n"
                                + "java.lang.UnsatisfiedLinkError: /tmp/libJCublas2-12.6.0-linux-x86_64.so: libcublas.so.12: cannot open shared object file: No such file or directory\n"
                                + "\tat java.base/jdk.internal.loader.NativeLibraries.load(Native Method)\n");

        assertThat(CudaDevices.nativeReason(e))
                .isEqualTo("UnsatisfiedLinkError: java.lang.UnsatisfiedLinkError: /tmp/libJCublas2-12.6.0-linux-x86_64.so: libcublas.so.12: cannot open shared object file: No such file or directory")
                .doesNotContain("\n");
        assertThat(CudaDevices.nativeReason(new UnsatisfiedLinkError("no JCudaDriver in java.library.path\nmore")))
                .isEqualTo("UnsatisfiedLinkError: no JCudaDriver in java.library.path");
    }

    @Test
    @DisplayName("on an NVIDIA GPU, the kernel's products equal the CPU path's bit for bit, whatever the batch fill")
    void gpuEqualsCpuBitForBit() {
        for (int[] dims : new int[][] {{96, 80}, {256, 256}, {1000, 3}}) {
            int rows = dims[0];
            int cols = dims[1];
            Matrix m = Matrix.generate(rows, cols, 9);
            GpuOpened opened = CudaKernelMatVec.open(GpuInfo.builder("nvidia", 0).build(), m, 64);
            if (opened.backend == null) {
                System.out.println("CUDA kernel test skipped: " + opened.reason);
            }
            Assumptions.assumeTrue(opened.backend != null, () -> "no usable NVIDIA GPU: " + opened.reason);
            try (MatVecBackend gpu = opened.backend;
                    CpuMatVec cpu = new CpuMatVec(m, 64)) {
                assertThat(gpu.path()).isEqualTo(MatVecBackend.Path.GPU);
                assertThat(gpu.describe()).contains("CUDA kernel");
                long id = 0;
                for (int count : new int[] {64, 17, 1}) {
                    for (int k = 0; k < count; k++) {
                        float[] x = IdVector.generate(id++, cols, 5).values;
                        gpu.input().put(k * cols, x);
                        cpu.input().put(k * cols, x);
                    }
                    gpu.multiply(count);
                    cpu.multiply(count);
                    float[] g = new float[count * rows];
                    float[] c = new float[count * rows];
                    gpu.output().get(0, g);
                    cpu.output().get(0, c);
                    assertThat(g).as("%dx%d, %d vectors", rows, cols, count).containsExactly(c);
                }
            }
        }
    }

    private static int count(Matcher m) {
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }
}
