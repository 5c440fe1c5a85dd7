package io.flinkdevices.samples;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.info.FpgaInfo;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.sdk.info.RdmaInfo;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The report job describes whatever kind of device its resource hands out. */
class DeviceReportTest {

    @Test
    @DisplayName("a GPU is described by its typed view, as before")
    void gpu() {
        GpuInfo g = GpuInfo.builder("nvidia", 1).uuid("GPU-1").name("NVIDIA H100").memoryBytes(80L << 30)
                .visibleDevices("CUDA_VISIBLE_DEVICES", "1").build();
        DeviceReport.Device d = DeviceReport.Device.of(g);
        assertThat(d.description).isEqualTo("GPU #1 GPU-1 (NVIDIA H100, 80 GiB, CUDA_VISIBLE_DEVICES=1)");
        assertThat(d.gpu()).contains(g);
        assertThat(d.shortName).isEqualTo("#1");
    }

    @Test
    @DisplayName("an OpenCL device (--resource fpga) is described, not refused as 'Not a GpuInfo'")
    void fpga() {
        FpgaInfo f = FpgaInfo.builder("Portable Computing Language", 0, "cpu-haswell", 0).computeUnits(2).build();
        DeviceReport.Device d = DeviceReport.Device.of(f);
        assertThat(d.kind).isEqualTo("fpga");
        assertThat(d.description).isEqualTo("OpenCL device #0 cpu-haswell (platform Portable Computing Language, 2 compute units)");
        assertThat(d.gpu()).isEmpty();
    }

    @Test
    @DisplayName("an RDMA port is described by device, port, link layer and state")
    void rdma() {
        RdmaInfo r = RdmaInfo.builder("mlx5_0", 1).linkLayer("Ethernet").state("ACTIVE").netdev("eth0").build();
        DeviceReport.Device d = DeviceReport.Device.of(r);
        assertThat(d.description).isEqualTo("RDMA port mlx5_0/1 (Ethernet, ACTIVE, netdev eth0)");
        assertThat(d.shortName).isEqualTo("mlx5_0/1");
    }

    @Test
    @DisplayName("a third-party kind, or a malformed GPU, is described by its properties")
    void otherKinds() {
        DeviceReport.Device npu = DeviceReport.Device.of(info(Map.of("kind", "npu", "index", "3", "serial", "Z-9")));
        assertThat(npu.description).isEqualTo("npu device {index=3, kind=npu, serial=Z-9}");
        assertThat(npu.shortName).isEqualTo("#3");
        DeviceReport.Device broken = DeviceReport.Device.of(info(Map.of("kind", "gpu", "index", "x")));
        assertThat(broken.description).isEqualTo("gpu device {index=x, kind=gpu}");
    }

    @Test
    @DisplayName("a subtask's line names its TaskManager, the resource, the device it leased, how much, and what its TaskManager received")
    void line() {
        DeviceReport.Device a = DeviceReport.Device.of(RdmaInfo.builder("mlx5_0", 1).state("ACTIVE").linkLayer("InfiniBand").build());
        DeviceReport.Line line = new DeviceReport.Line(2, "tm1 pid 7", "rdma", List.of(a), a, 0.5, null);
        assertThat(line.toString()).isEqualTo("subtask 2 on TaskManager tm1 pid 7, rdma: leased mlx5_0/1 (share 0.5), RDMA port"
                + " mlx5_0/1 (InfiniBand, ACTIVE); TaskManager received [mlx5_0/1]");
        assertThat(new DeviceReport.Line(1, "tm1 pid 7", "rdma", List.of(a), a, 1.0, null).toString())
                .contains(": leased mlx5_0/1 (whole), ");
        assertThat(new DeviceReport.Line(0, "tm2 pid 9", "gpu", List.of(), null, 0, null).toString())
                .isEqualTo("subtask 0 on TaskManager tm2 pid 9, gpu: no device (TaskManager received [])");
        assertThat(new DeviceReport.Line(3, "tm2 pid 9", "rdma", List.of(a), null, 0, "cannot lease ...").toString())
                .isEqualTo("subtask 3 on TaskManager tm2 pid 9, rdma: no device (TaskManager received [mlx5_0/1]): cannot lease ...");
    }

    private static ExternalResourceInfo info(Map<String, String> props) {
        return new ExternalResourceInfo() {
            @Override
            public Optional<String> getProperty(String key) {
                return Optional.ofNullable(props.get(key));
            }

            @Override
            public java.util.Collection<String> getKeys() {
                return props.keySet();
            }
        };
    }
}
