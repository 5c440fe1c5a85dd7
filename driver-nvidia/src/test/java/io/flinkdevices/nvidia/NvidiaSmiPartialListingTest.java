package io.flinkdevices.nvidia;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;
import io.flinkdevices.testkit.logging.LogCapture;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;

/**
 * nvidia-smi exits non-zero when it cannot open one GPU ("Unable to determine the device handle",
 * a GPU falling off the bus or being reset) although it listed the others: those are served.
 */
@DisplayName("nvidia-smi that cannot open one GPU")
@ExtendWith(StopDeviceMonitors.class)
class NvidiaSmiPartialListingTest {

    private static final String ROW0 = "0, GPU-4c3d2b1a-1111-2222-3333-444455556666, NVIDIA H100 80GB HBM3, 81559, 00000000:07:00.0, 9.0, Disabled, 0x0000000000000001\n";
    private static final String LOST = "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n";

    @TempDir Path temp;

    private Set<? extends ExternalResourceInfo> retrieve(FakeExecutable.Builder smi, long amount) throws Exception {
        FakeHost host = FakeHost.create(temp.resolve("host"));
        host.install(smi);
        Configuration c = new Configuration();
        c.setString("backend", "nvidia-smi");
        c.setString("nvidia-smi.path", host.bin("nvidia-smi").toString());
        return new NvidiaGpuDriverFactory(Map.of()).createExternalResourceDriver(c).retrieveResourceInfo(amount);
    }

    @Test
    @DisplayName("the GPUs it listed are handed out, the one it could not open is left out with one WARN")
    void listedGpusAreServed() throws Exception {
        try (LogCapture log = LogCapture.warnings(NvidiaSmiBackend.class)) {
            Set<? extends ExternalResourceInfo> infos = retrieve(
                    FakeExecutable.named("nvidia-smi").stdout(ROW0 + LOST).exitCode(255), 1);
            assertThat(infos).singleElement().satisfies(i -> assertThat(GpuInfo.from(i).getIndex()).isZero());
            assertThat(log.text()).contains("exited with code 255 because it could not open 1 GPU(s)")
                    .contains("Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error")
                    .contains("left out, as GPUs that fall off the bus or are being reset");
        }
    }

    @Test
    @DisplayName("the same line on stderr counts too; a shortfall still names what is missing")
    void onStderrAndTooFew() throws Exception {
        assertThat(retrieve(FakeExecutable.named("nvidia-smi").stdout(ROW0).stderr(LOST).exitCode(255), 1)).hasSize(1);
        assertThatThrownBy(() -> retrieve(FakeExecutable.named("nvidia-smi").stdout(ROW0 + LOST).exitCode(255), 2))
                .hasMessageContaining("Asked for 2 NVIDIA GPUs").hasMessageContaining("found 1: [GPU 0 GPU-4c3d2b1a");
    }

    @Test
    @DisplayName("without a GPU row, or with another error, the exit code stays an error naming it")
    void otherwiseAnError() {
        assertThatThrownBy(() -> retrieve(FakeExecutable.named("nvidia-smi").stdout(LOST).exitCode(255), 1))
                .hasMessageContaining("exited with code 255").hasMessageContaining("Unable to determine the device handle");
        assertThatThrownBy(() -> retrieve(FakeExecutable.named("nvidia-smi").stdout(ROW0).stderr("NVIDIA-SMI has failed\n").exitCode(9), 1))
                .hasMessageContaining("exited with code 9");
    }
}
