package io.flinkdevices.samples.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

/**
 * The GPU sample job with flink-devices' NVIDIA driver in the TaskManager, on a fake host whose
 * {@code nvidia-smi} lists two H100s: the subtasks receive NVIDIA GPUs, try the GPU path, and,
 * since CUDA has no such devices here, fall back to the CPU path without an Error reaching Flink.
 */
class MatrixVectorJobNvidiaITCase {

    @TempDir Path temp;

    @Test
    @DisplayName("NVIDIA GPUs that CUDA cannot open send every subtask to the CPU path, with correct products")
    void nvidiaGpusWithoutCudaFallBackToCpu() throws Exception {
        FakeHost host = FakeHost.create(temp.resolve("host"));
        Path smi = FakeNvidiaHost.installH100s(host, 2);

        MatrixVectorJob.Result r =
                MatrixVectorLocal.run(32, 700, 16, 2, MatrixVectorLocal.Devices.nvidia(smi.toString()));

        assertThat(host.executable("nvidia-smi").invocations())
                .as("the TaskManager's NVIDIA driver asked nvidia-smi")
                .contains(FakeNvidiaHost.QUERY);
        // The fake host's UUIDs are no CUDA device's, on a GPU host as well as here.
        assertThat(r.subtasksCpu).isEqualTo(2);
        assertThat(r.recordsCpu).isEqualTo(700);
        assertThat(r.checked).isPositive();
        assertThat(r.mismatches).isZero();
    }
}
