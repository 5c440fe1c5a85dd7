package io.flinkdevices.job;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.job.internal.lease.LeaseAsk;
import io.flinkdevices.job.internal.lease.LeaseTable;
import io.flinkdevices.sdk.info.DeviceSelection;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.sdk.info.RdmaInfo;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

@DisplayName("A device lease")
class DeviceLeaseTest {

    private final LeaseTable table = LeaseTable.isolated();

    private DeviceLease lease(List<ExternalResourceInfo> infos, int count, double share, String key) throws Exception {
        LeaseAsk ask = new LeaseAsk("gpu", infos, count, Math.round(share * LeaseTable.WHOLE), key, "task " + key, 0,
                DeviceSelection.order());
        return new DeviceLease("gpu", table.acquire(ask), table, ask);
    }

    private static List<ExternalResourceInfo> gpus(long... memory) {
        List<ExternalResourceInfo> out = new ArrayList<>();
        for (int i = 0; i < memory.length; i++) {
            out.add(GpuInfo.builder("nvidia", i).uuid("GPU-" + i).memoryBytes(memory[i])
                    .visibleDevices("CUDA_VISIBLE_DEVICES", "GPU-" + i).build());
        }
        return out;
    }

    @Test
    @DisplayName("gives a child process the visible-devices variable of its leased devices only")
    void environmentPinsTheLeasedDevices() throws Exception {
        List<ExternalResourceInfo> four = gpus(1, 1, 1, 1);
        DeviceLease one = lease(four, 1, 1.0, "a");
        DeviceLease two = lease(four, 2, 1.0, "b");
        assertThat(one.environment()).isEqualTo(Map.of("CUDA_VISIBLE_DEVICES", one.first(GpuInfo::from).getUuid().orElseThrow()));
        assertThat(two.environment().get("CUDA_VISIBLE_DEVICES").split(","))
                .containsExactlyInAnyOrderElementsOf(two.deviceNames())
                .doesNotContain(one.deviceNames().get(0));
        DeviceLease port = new DeviceLease("rdma", LeaseTable.isolated().acquire(new LeaseAsk("rdma",
                List.of(RdmaInfo.builder("mlx5_0", 1).build()), 1, LeaseTable.WHOLE, "p", "task p", 0, DeviceSelection.order())),
                table, new LeaseAsk("rdma", List.of(), 1, LeaseTable.WHOLE, "p", "task p", 0, DeviceSelection.order()));
        assertThat(port.environment()).as("RDMA ports name no visible-devices variable").isEmpty();
    }

    @Test
    @DisplayName("a share's memory budget is its part of the device's memory; whole leases of several devices get the smallest")
    void memoryBudget() throws Exception {
        DeviceLease half = lease(gpus(80L << 30), 1, 0.5, "half");
        assertThat(half.memoryBudgetBytes()).hasValue(40L << 30);
        DeviceLease third = lease(gpus(3_000_000_001L), 1, 1.0 / 3, "third");
        assertThat(third.memoryBudgetBytes()).hasValue(999_999_000L);
        DeviceLease both = lease(gpus(16L << 30, 8L << 30), 2, 1.0, "both");
        assertThat(both.memoryBudgetBytes()).hasValue(8L << 30);
        DeviceLease noSize = lease(List.of(GpuInfo.builder("nvidia", 0).build()), 1, 1.0, "x");
        assertThat(noSize.memoryBudgetBytes()).isEmpty();
    }

    @Test
    @DisplayName("closing gives the device back, once; the lease says so")
    void closeTwice() throws Exception {
        List<ExternalResourceInfo> one = gpus(1);
        DeviceLease first = lease(one, 1, 1.0, "a");
        first.close();
        first.close();
        assertThat(first.isClosed()).isTrue();
        assertThat(first.toString()).endsWith("(1 whole device, closed)");
        DeviceLease second = lease(one, 1, 1.0, "b");
        assertThat(second.infos()).containsExactlyElementsOf(one);
        assertThat(second.share()).isEqualTo(1.0);
    }
}
