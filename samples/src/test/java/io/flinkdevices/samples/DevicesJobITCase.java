package io.flinkdevices.samples;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.stream.Collectors;

class DevicesJobITCase {

    @Test
    @DisplayName("every subtask of the main job uses its own GPU from the NVIDIA driver plugin")
    void everySubtaskGetsItsOwnDevice() throws Exception {
        List<DeviceReport.Line> lines = DevicesJob.run(true, 4, 2);

        assertThat(lines).extracting(l -> l.subtask).containsExactly(0, 1);
        for (DeviceReport.Line line : lines) {
            assertThat(line.devices)
                    .as("GPUs the TaskManager received")
                    .extracting(g -> g.getUuid().orElseThrow())
                    .containsExactly(FakeNvidiaHost.gpuUuid(0), FakeNvidiaHost.gpuUuid(1));
            assertThat(line.picked).isNotNull();
            assertThat(line.picked.getVendor()).isEqualTo("nvidia");
            assertThat(line.picked.getArchitecture()).contains("sm_90");
            assertThat(line.picked.getVisibleDevicesEnv()).contains("CUDA_VISIBLE_DEVICES");
        }
        List<GpuInfo> picked = lines.stream().map(l -> l.picked).collect(Collectors.toList());
        assertThat(picked).doesNotHaveDuplicates();
    }
}
