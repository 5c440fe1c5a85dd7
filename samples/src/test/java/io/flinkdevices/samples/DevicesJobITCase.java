package io.flinkdevices.samples;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.info.GpuInfo;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.stream.Collectors;

class DevicesJobITCase {

    @Test
    @DisplayName("every subtask of the main job uses its own device from the TaskManager's plugin")
    void everySubtaskGetsItsOwnDevice() throws Exception {
        List<DeviceReport.Line> lines = DevicesJob.run(4, 2);

        assertThat(lines).extracting(l -> l.subtask).containsExactly(0, 1);
        for (DeviceReport.Line line : lines) {
            assertThat(line.devices).as("devices the TaskManager received").hasSize(2);
            assertThat(line.picked).isNotNull();
            assertThat(line.devices).contains(line.picked);
            assertThat(line.picked.getVendor()).isEqualTo("simulated");
        }
        List<GpuInfo> picked = lines.stream().map(l -> l.picked).collect(Collectors.toList());
        assertThat(picked).doesNotHaveDuplicates();
    }
}
