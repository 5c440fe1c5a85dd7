package io.flinkdevices.samples.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The GPU sample job on this host's real NVIDIA GPU: flink-devices' NVIDIA driver in the
 * TaskManager runs the host's {@code nvidia-smi}, the subtask receives the GPU and computes on it.
 * Skipped, with the reason printed, on hosts without a GPU or {@code nvidia-smi}.
 */
class MatrixVectorJobRealGpuITCase {

    @Test
    @DisplayName("on a GPU host, the subtask receives the real GPU from the driver and every product is computed on it, correctly")
    void runsOnTheRealGpu() throws Exception {
        String whyNot =
                Files.exists(Path.of("/dev/nvidiactl")) && Files.exists(Path.of("/dev/nvidia0"))
                        ? null
                        : "no NVIDIA GPU on this host (/dev/nvidia0 and /dev/nvidiactl absent)";
        boolean smi =
                Arrays.stream(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                        .anyMatch(d -> !d.isEmpty() && Files.isExecutable(Path.of(d, "nvidia-smi")));
        if (whyNot == null && !smi) {
            whyNot = "nvidia-smi is not on the PATH";
        }
        if (whyNot != null) {
            System.out.println("MatrixVectorJobRealGpuITCase skipped: " + whyNot);
        }
        Assumptions.assumeTrue(whyNot == null, whyNot);

        MatrixVectorJob.Result r = MatrixVectorLocal.run(256, 50_000, 256, 1, MatrixVectorLocal.Devices.nvidia(null));
        System.out.println(r.summary());

        assertThat(r.subtasksGpu).as("subtasks on the GPU path").isEqualTo(1);
        assertThat(r.recordsGpu).isEqualTo(50_000);
        assertThat(r.recordsCpu).isZero();
        assertThat(r.checked).isPositive();
        assertThat(r.mismatches).isZero();
    }
}
