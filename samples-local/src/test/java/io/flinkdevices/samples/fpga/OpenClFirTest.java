package io.flinkdevices.samples.fpga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.info.FpgaInfo;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

class OpenClFirTest {

    /** One sensor's stream in batches of {@code batch} through the kernel, history carried by hand. */
    private static float[] viaKernel(OpenClFir fir, float[] taps, float[] xs, int batch) {
        int h = taps.length - 1;
        float[] history = new float[h];
        float[] ys = new float[xs.length];
        for (int start = 0; start < xs.length; start += batch) {
            int n = Math.min(batch, xs.length - start);
            fir.input().put(0, history, 0, h);
            for (int i = 0; i < n; i++) {
                fir.input().put(h + i, xs[start + i]);
                fir.positions().put(i, h + i);
            }
            fir.run(n, h + n);
            fir.output().get(0, ys, start, n);
            fir.input().get(n, history, 0, h);
        }
        return ys;
    }

    private static float[] signal(int n) {
        float[] xs = new float[n];
        for (int i = 0; i < n; i++) {
            xs[i] = Fir.signal(1, i);
        }
        return xs;
    }

    @Nested
    @DisplayName("on PoCL's CPU device")
    class OnPocl {

        @Test
        @DisplayName("the kernel equals the CPU reference bit for bit, across batch boundaries")
        void kernelEqualsReference() {
            FpgaInfo device = OpenClAvailability.require(OpenClAvailability.POCL).info;
            float[] taps = Fir.lowPass(64);
            float[] xs = signal(1000);
            try (OpenClFir fir = OpenClFir.open(device, taps, 96, null, null)) {
                assertThat(viaKernel(fir, taps, xs, 96)).containsExactly(Fir.filter(taps, xs));
            }
        }

        @Test
        @DisplayName("a file that is not a bitstream for the device fails with its path and what a bitstream is")
        void invalidBitstream(@TempDir Path dir) throws Exception {
            FpgaInfo device = OpenClAvailability.require(OpenClAvailability.POCL).info;
            Path bogus = dir.resolve("fir.aocx");
            Files.write(bogus, "this is not a device binary".getBytes(StandardCharsets.UTF_8));
            assertThatThrownBy(() -> OpenClFir.open(device, Fir.lowPass(8), 16, bogus, null))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining(bogus.toAbsolutePath().toString())
                    .hasMessageContaining(device.getDeviceName())
                    .hasMessageContaining(".aocx")
                    .hasMessageContaining("CL_INVALID_BINARY");
        }

        @Test
        @DisplayName("a missing bitstream file is named in the error")
        void missingBitstream(@TempDir Path dir) {
            FpgaInfo device = OpenClAvailability.require(OpenClAvailability.POCL).info;
            Path missing = dir.resolve("nothing.xclbin");
            assertThatThrownBy(() -> OpenClFir.open(device, Fir.lowPass(8), 16, missing, null))
                    .hasMessageContaining("cannot read bitstream " + missing.toAbsolutePath());
        }

        @Test
        @DisplayName("a device whose name differs from what the info says is refused with both names")
        void nameMismatch() {
            FpgaInfo real = OpenClAvailability.require(OpenClAvailability.POCL).info;
            FpgaInfo wrong =
                    FpgaInfo.builder(real.getPlatform(), real.getPlatformIndex(), "Some FPGA board", real.getDeviceIndex())
                            .build();
            assertThatThrownBy(() -> OpenClFir.open(wrong, Fir.lowPass(8), 16, null, null))
                    .hasMessageContaining("is '" + real.getDeviceName() + "', not 'Some FPGA board'");
        }

        @Test
        @DisplayName("a platform index beyond what the loader lists is refused")
        void noSuchPlatform() {
            OpenClAvailability.require(OpenClAvailability.POCL);
            FpgaInfo absent = FpgaInfo.builder("Intel(R) FPGA SDK for OpenCL(TM)", 42, "pac_a10", 0).build();
            assertThatThrownBy(() -> OpenClFir.open(absent, Fir.lowPass(8), 16, null, null))
                    .hasMessageContaining("platform #42 does not exist");
        }
    }

    @Nested
    @DisplayName("on oclgrind's simulated accelerator")
    class OnOclgrind {

        @Test
        @DisplayName("the kernel equals the CPU reference bit for bit on a tiny input")
        void kernelEqualsReference() {
            OpenClDevices.Device d = OpenClAvailability.require(OpenClAvailability.OCLGRIND);
            assertThat(d.is(org.jocl.CL.CL_DEVICE_TYPE_ACCELERATOR)).isTrue();
            float[] taps = Fir.lowPass(8);
            float[] xs = signal(40);
            try (OpenClFir fir = OpenClFir.open(d.info, taps, 16, null, null)) {
                assertThat(viaKernel(fir, taps, xs, 16)).containsExactly(Fir.filter(taps, xs));
            }
        }

        /**
         * The subtasks of a job open, run and close FIRs on oclgrind from several threads, job
         * after job, in one TaskManager JVM. With non-blocking writes this corrupted oclgrind's
         * heap within 40 cycles (the JVM died with SIGSEGV or a glibc heap abort); a regression
         * crashes this test's JVM, which fails the build.
         */
        @Test
        @DisplayName("two threads opening, running and closing FIRs 40 times in one JVM get exact results and never corrupt oclgrind")
        void repeatedCyclesFromTwoThreads() throws Exception {
            OpenClDevices.Device d = OpenClAvailability.require(OpenClAvailability.OCLGRIND);
            float[] taps = Fir.lowPass(5);
            float[] xs = signal(48);
            float[] expected = Fir.filter(taps, xs);
            java.util.concurrent.ConcurrentLinkedQueue<Throwable> failures = new java.util.concurrent.ConcurrentLinkedQueue<>();
            java.util.List<Thread> threads = new java.util.ArrayList<>();
            for (int t = 0; t < 2; t++) {
                threads.add(new Thread(() -> {
                    for (int cycle = 0; cycle < 20; cycle++) {
                        try (OpenClFir fir = OpenClFir.open(d.info, taps, 16, null, null)) {
                            assertThat(viaKernel(fir, taps, xs, 16)).containsExactly(expected);
                        } catch (Throwable e) {
                            failures.add(e);
                            return;
                        }
                    }
                }, "oclgrind-cycles-" + t));
            }
            threads.forEach(Thread::start);
            for (Thread t : threads) {
                t.join(120_000);
                assertThat(t.isAlive()).as("%s finished within 2 minutes", t.getName()).isFalse();
            }
            assertThat(failures).isEmpty();
        }
    }
}
