package io.flinkdevices.testkit.fake;

import io.flinkdevices.sdk.process.ExternalCommand;
import io.flinkdevices.testkit.fake.FakeNvidiaHost.Model;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The fake nvidia-smi answers the driver's queries as the real tool does, and nothing else. */
@DisplayName("The fake NVIDIA host")
class FakeNvidiaHostITCase {

    @TempDir Path temp;

    private static ExternalCommand.Result run(Path smi, List<String> args) throws Exception {
        return ExternalCommand.of(smi, args, Duration.ofSeconds(10), "nvidia-smi").run();
    }

    @Test
    @DisplayName("prints one CSV line per GPU, [N/A] MIG mode for GPUs without MIG, and MIG devices under -L")
    void queryAndList() throws Exception {
        Path smi =
                FakeNvidiaHost.builder()
                        .gpu(Model.A100_SXM_80GB, "1g.10gb", "3g.40gb")
                        .gpu(Model.T4)
                        .installOn(FakeHost.create(temp));

        assertThat(run(smi, FakeNvidiaHost.QUERY).stdout())
                .isEqualTo(
                        "0, " + FakeNvidiaHost.gpuUuid(0) + ", NVIDIA A100-SXM4-80GB, 81920, 00000000:07:00.0, 8.0, Enabled, 0x0000000000000001\n"
                                + "1, " + FakeNvidiaHost.gpuUuid(1) + ", Tesla T4, 15360, 00000000:17:00.0, 7.5, [N/A], 0x0000000000000001\n");
        assertThat(run(smi, FakeNvidiaHost.QUERY_WITHOUT_THROTTLE).stdout())
                .as("the listing an nvidia-smi that refuses the throttle reasons gets")
                .isEqualTo("0, " + FakeNvidiaHost.gpuUuid(0) + ", NVIDIA A100-SXM4-80GB, 81920, 00000000:07:00.0, 8.0, Enabled\n"
                        + "1, " + FakeNvidiaHost.gpuUuid(1) + ", Tesla T4, 15360, 00000000:17:00.0, 7.5, [N/A]\n");
        assertThat(run(smi, List.of("-L")).stdout())
                .contains("GPU 0: NVIDIA A100-SXM4-80GB (UUID: " + FakeNvidiaHost.gpuUuid(0) + ")\n")
                .contains("  MIG 1g.10gb     Device  0: (UUID: " + FakeNvidiaHost.migUuid(0, 0) + ")\n")
                .contains("  MIG 3g.40gb     Device  1: (UUID: " + FakeNvidiaHost.migUuid(0, 1) + ")\n")
                .endsWith("GPU 1: Tesla T4 (UUID: " + FakeNvidiaHost.gpuUuid(1) + ")\n");
        assertThat(run(smi, FakeNvidiaHost.FLINK_SCRIPT_QUERY).stdout()).isEqualTo("0\n1\n");
        assertThat(run(smi, List.of("--bogus")).exitCode()).isEqualTo(2);
    }

    @Test
    @DisplayName("registers DeviceFaults: the GPU falls off the bus (nvidia-smi finds no GPU as the real one says it, the NVML state loses it) and comes back")
    void lostGpuFaultComesBack() throws Exception {
        FakeHost host = FakeHost.create(temp);
        InstalledNvidiaHost gpus = FakeNvidiaHost.builder().gpus(Model.T4, 1).install(host);
        Path smi = gpus.smi().path();
        DeviceFaults faults = host.faults().orElseThrow();
        String line = "0, " + FakeNvidiaHost.gpuUuid(0) + ", Tesla T4, 15360, 00000000:07:00.0, 7.5, [N/A], 0x0000000000000001\n";

        faults.inject(0);
        // the host's last GPU is gone: the real nvidia-smi says so on stdout and exits 6
        for (List<String> listing : List.of(FakeNvidiaHost.QUERY, FakeNvidiaHost.MONITOR_QUERY, List.of("-L"), FakeNvidiaHost.FLINK_SCRIPT_QUERY)) {
            ExternalCommand.Result r = run(smi, listing);
            assertThat(r.stdout()).as("stdout of nvidia-smi %s", listing).isEqualTo("No devices were found\n");
            assertThat(r.exitCode()).as("exit code of nvidia-smi %s", listing).isEqualTo(6);
        }
        // lost 1, then the clock throttle reasons: 0x1, the GPU is idle
        assertThat(java.nio.file.Files.readString(gpus.nvmlState())).endsWith("\t1\t1\n");

        // each query gets its own answer back, with exit code 0
        faults.recover(0);
        assertThat(run(smi, FakeNvidiaHost.QUERY).stdout()).isEqualTo(line);
        assertThat(run(smi, FakeNvidiaHost.QUERY).exitCode()).isZero();
        assertThat(run(smi, FakeNvidiaHost.MONITOR_QUERY).stdout()).startsWith(FakeNvidiaHost.gpuUuid(0) + ", 0, 0, 1, 15360, 34, 70.50");
        assertThat(run(smi, List.of("-L")).stdout()).isEqualTo("GPU 0: Tesla T4 (UUID: " + FakeNvidiaHost.gpuUuid(0) + ")\n");
        assertThat(run(smi, FakeNvidiaHost.FLINK_SCRIPT_QUERY).stdout()).isEqualTo("0\n");
        assertThat(java.nio.file.Files.readString(gpus.nvmlState())).endsWith("\t0\t1\n");
        assertThat(faults.describe()).contains("falls off the bus");

        // degraded: HW slowdown (0x8) among the throttle reasons, on both faces, until it recovers
        assertThat(faults.degrades()).isTrue();
        faults.degrade(0);
        assertThat(run(smi, FakeNvidiaHost.MONITOR_QUERY).stdout()).endsWith(", 0x0000000000000009\n");
        assertThat(run(smi, FakeNvidiaHost.QUERY).stdout()).as("the listing shows the slowdown too").endsWith(", 0x0000000000000009\n");
        assertThat(java.nio.file.Files.readString(gpus.nvmlState())).endsWith("\t0\t9\n");
        faults.recover(0);
        assertThat(run(smi, FakeNvidiaHost.MONITOR_QUERY).stdout()).endsWith(", 0x0000000000000001\n");
        assertThat(java.nio.file.Files.readString(gpus.nvmlState())).endsWith("\t0\t1\n");
    }

    @Test
    @DisplayName("as a driver older than 510 rejects compute_cap like the real tool and answers without it")
    void oldDriver() throws Exception {
        Path smi = FakeNvidiaHost.builder().gpus(Model.V100_SXM2_32GB, 1).oldDriver().installOn(FakeHost.create(temp));

        ExternalCommand.Result withCap = run(smi, FakeNvidiaHost.QUERY);
        assertThat(withCap.exitCode()).isEqualTo(2);
        assertThat(withCap.stdout()).contains("Field \"compute_cap\" is not a valid field to query.");
        assertThat(run(smi, FakeNvidiaHost.QUERY_WITHOUT_COMPUTE_CAP).stdout())
                .isEqualTo("0, " + FakeNvidiaHost.gpuUuid(0) + ", Tesla V100-SXM2-32GB, 32768, 00000000:07:00.0, [N/A]\n");
    }

    @Test
    @DisplayName("refuses MIG devices on a model without MIG")
    void migOnlyWhereSupported() {
        assertThatThrownBy(() -> FakeNvidiaHost.builder().gpu(Model.T4, "1g.10gb"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("T4");
    }
}
