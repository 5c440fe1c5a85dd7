package io.flinkdevices.samples.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import jcuda.Pointer;
import jcuda.driver.CUresult;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The asynchronous GPU path. The arguments, the host buffers' fallback and the bounded wait are
 * tested everywhere; the products only where CUDA opens device 0 (skipped with the reason
 * elsewhere).
 */
class CudaBatchBackendTest {

    /** Page-locked memory that is never granted, as under a locked-memory limit. */
    static final HostBuffers.PinnedMemory REFUSING =
            new HostBuffers.PinnedMemory() {
                @Override
                public int allocate(Pointer into, long bytes) {
                    return CUresult.CUDA_ERROR_OUT_OF_MEMORY;
                }

                @Override
                public void free(Pointer memory) {
                    throw new AssertionError("nothing was allocated");
                }
            };

    @Nested
    @DisplayName("without a GPU")
    class Everywhere {

        @Test
        @DisplayName("slots, batch size and device that cannot work are refused naming the argument and its range, before CUDA is touched")
        void badArguments() {
            Matrix m = Matrix.generate(8, 8, 1);

            assertThatThrownBy(() -> CudaBatchBackend.open(0, m, 64, 0))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("slots must be 1 to 16 batches in flight, not 0");
            assertThatThrownBy(() -> CudaBatchBackend.open(0, m, 64, 17)).hasMessage("slots must be 1 to 16 batches in flight, not 17");
            assertThatThrownBy(() -> CudaBatchBackend.open(0, m, 0, 2))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("batchSize must be 1 to 65535 vectors (one kernel launch), not 0");
            assertThatThrownBy(() -> CudaBatchBackend.open(0, m, 65_536, 2)).hasMessageContaining("not 65536");
            assertThatThrownBy(() -> CudaBatchBackend.open(-1, m, 64, 2))
                    .hasMessage("cudaDevice must be a CUDA device ordinal, 0 or more, not -1");
            assertThatThrownBy(() -> CudaBatchBackend.open(0, Matrix.generate(8, 10_000, 1), 60_000, 2))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(
                            "batchSize 60000 makes a batch buffer of 2400000000 bytes for a 8x10000 matrix; the most is 2147483647 bytes,"
                                    + " so batchSize must be 1 to 53687");
        }

        @Test
        @DisplayName("a device CUDA does not have is refused with its ordinal, as an exception, never an Error")
        void noSuchDevice() {
            assertThatThrownBy(() -> CudaBatchBackend.open(99, Matrix.generate(8, 8, 1), 64, 2))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("CUDA device 99");
        }

        @Test
        @DisplayName("CUDA errors are named as CUDA names them, after the device")
        void errorNames() {
            assertThatThrownBy(() -> CudaCheck.check(CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA device 0 (NVIDIA H200)", "cuEventQuery"))
                    .hasMessage("CUDA device 0 (NVIDIA H200): cuEventQuery failed: CUDA_ERROR_ILLEGAL_ADDRESS (700)");
        }

        @Test
        @DisplayName("refused page-locked memory falls back to pageable direct buffers with one WARN line saying why")
        void pageableFallback() {
            List<String> warnings = new ArrayList<>();

            HostBuffers b = HostBuffers.allocate(3, 1024, 2048, REFUSING, "CUDA device 0 (NVIDIA H200)", warnings::add);

            assertThat(warnings).singleElement().asString()
                    .startsWith("CUDA device 0 (NVIDIA H200): no page-locked host memory for the batch buffers"
                            + " (cuMemHostAlloc of 1024 bytes for slot 0's input failed: CUDA_ERROR_OUT_OF_MEMORY (2));"
                            + " using pageable direct buffers instead")
                    .contains("ulimit -l");
            assertThat(b.pinned()).isFalse();
            for (int s = 0; s < 3; s++) {
                assertThat(b.input(s).isDirect()).isTrue();
                assertThat(b.input(s).capacity()).isEqualTo(1024);
                assertThat(b.output(s).capacity()).isEqualTo(2048);
                assertThat(b.input(s).order()).isEqualTo(ByteOrder.nativeOrder());
            }
            b.free();
        }

        @Test
        @DisplayName("a bounded wait returns the first answer that is not NOT_READY, and NOT_READY once the deadline passed")
        void boundedWait() throws Exception {
            int[] answers = {CUresult.CUDA_ERROR_NOT_READY, CUresult.CUDA_ERROR_NOT_READY, CUresult.CUDA_SUCCESS};
            int[] asked = {0};
            assertThat(BoundedWait.await(() -> answers[asked[0]++], Long.MAX_VALUE, System::nanoTime)).isEqualTo(CUresult.CUDA_SUCCESS);
            assertThat(asked[0]).isEqualTo(3);

            assertThat(BoundedWait.await(() -> CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, Long.MAX_VALUE, System::nanoTime))
                    .isEqualTo(CUresult.CUDA_ERROR_ILLEGAL_ADDRESS);

            long[] clock = {0};
            int rc = BoundedWait.await(() -> CUresult.CUDA_ERROR_NOT_READY, 5_000_000_000L, () -> clock[0] += 1_000_000_000L);
            assertThat(rc).isEqualTo(CUresult.CUDA_ERROR_NOT_READY);
            assertThat(clock[0]).as("gave up at the deadline, not long after").isLessThanOrEqualTo(7_000_000_000L);
        }

        @Test
        @DisplayName("a cancelled task (interrupted thread) stops waiting at once")
        void interrupted() {
            Thread.currentThread().interrupt();
            try {
                assertThatThrownBy(() -> BoundedWait.await(() -> CUresult.CUDA_ERROR_NOT_READY, Long.MAX_VALUE, System::nanoTime))
                        .isInstanceOf(InterruptedException.class);
            } finally {
                Thread.interrupted();
            }
        }
    }

    @Nested
    @DisplayName("on an NVIDIA GPU")
    class OnAGpu {

        @Test
        @DisplayName("products equal the CPU path's bit for bit, with 1, 2 and 3 batches in flight, a partial last batch and slots reused; also on pageable buffers when page-locked memory is refused")
        void bitIdenticalToCpu() throws Exception {
            for (int[] dims : new int[][] {{96, 80}, {256, 256}, {1000, 3}}) {
                Matrix m = Matrix.generate(dims[0], dims[1], 9);
                for (int slots : new int[] {1, 2, 3}) {
                    try (CudaBatchBackend gpu = openOrSkip(m, 64, slots, HostBuffers.CUDA)) {
                        assertThat(gpu.pinned()).as("page-locked buffers: %s", gpu.describe()).isTrue();
                        assertThat(gpu.describe()).contains("page-locked").contains(slots + " slot(s)");
                        runAndCompare(gpu, m, new int[] {64, 64, 64, 64, 64, 64, 64, 17});
                    }
                }
                try (CudaBatchBackend gpu = openOrSkip(m, 64, 2, REFUSING)) {
                    assertThat(gpu.pinned()).isFalse();
                    assertThat(gpu.describe()).contains("pageable host buffers (cuMemHostAlloc of").contains("CUDA_ERROR_OUT_OF_MEMORY");
                    runAndCompare(gpu, m, new int[] {64, 64, 64, 5});
                }
            }
        }

        @Test
        @DisplayName("misuse is refused with the argument and range; finish of an idle slot returns; close twice is harmless")
        void misuse() throws Exception {
            Matrix m = Matrix.generate(16, 16, 3);
            CudaBatchBackend gpu = openOrSkip(m, 8, 2, HostBuffers.CUDA);
            try {
                assertThatThrownBy(() -> gpu.start(2, 1)).hasMessage("slot must be 0 to 1 (slots = 2), not 2");
                assertThatThrownBy(() -> gpu.start(0, 9)).hasMessage("records must be 0 to 8 (batchSize), not 9");
                gpu.finish(1);
                gpu.start(0, 8);
                assertThatThrownBy(() -> gpu.start(0, 8)).hasMessage("slot 0 is still in flight: finish(0) before starting it again");
                gpu.finish(0);
                gpu.start(0, 0);
                gpu.finish(0);
            } finally {
                gpu.close();
            }
            gpu.close();
            assertThatThrownBy(() -> gpu.input(0)).hasMessageEndingWith("the asynchronous GPU path is closed");
        }

        private CudaBatchBackend openOrSkip(Matrix m, int batch, int slots, HostBuffers.PinnedMemory pinned) {
            String noGpu = GpuAvailability.reasonWhyNot();
            if (noGpu != null) {
                System.out.println("CudaBatchBackend GPU test skipped: " + noGpu);
            }
            Assumptions.assumeTrue(noGpu == null, noGpu);
            // On a GPU host CUDA must open: a failure here is a failure, not a skip.
            return CudaBatchBackend.open(0, m, batch, slots, pinned, Duration.ofSeconds(60));
        }

        /** Round robin over the slots as the batching operator does, finishing a slot only when it comes round again. */
        private void runAndCompare(CudaBatchBackend gpu, Matrix m, int[] batches) throws Exception {
            int rows = m.rows();
            int cols = m.cols();
            int slots = gpu.slots();
            float[][][] sent = new float[slots][][];
            long id = 0;
            int checked = 0;
            for (int i = 0; i < batches.length + slots; i++) {
                int slot = i % slots;
                if (sent[slot] != null) {
                    gpu.finish(slot);
                    checked += compare(gpu.output(slot).asFloatBuffer(), sent[slot], m, slot);
                    sent[slot] = null;
                }
                if (i < batches.length) {
                    int count = batches[i];
                    FloatBuffer in = gpu.input(slot).asFloatBuffer();
                    sent[slot] = new float[count][];
                    for (int k = 0; k < count; k++) {
                        sent[slot][k] = IdVector.generate(id++, cols, 5).values;
                        in.put(k * cols, sent[slot][k]);
                    }
                    gpu.start(slot, count);
                }
            }
            assertThat(checked).as("every vector's product compared").isEqualTo((int) id * rows);
        }

        private int compare(FloatBuffer out, float[][] vectors, Matrix m, int slot) {
            int rows = m.rows();
            try (CpuMatVec cpu = new CpuMatVec(m, vectors.length)) {
                for (int k = 0; k < vectors.length; k++) {
                    cpu.input().put(k * m.cols(), vectors[k]);
                }
                cpu.multiply(vectors.length);
                float[] g = new float[vectors.length * rows];
                float[] c = new float[vectors.length * rows];
                out.get(0, g);
                cpu.output().get(0, c);
                assertThat(g).as("%dx%d, slot %d, %d vectors", rows, m.cols(), slot, vectors.length).containsExactly(c);
                return g.length;
            }
        }
    }
}
