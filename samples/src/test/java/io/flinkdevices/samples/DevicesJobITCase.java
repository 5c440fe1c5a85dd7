package io.flinkdevices.samples;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
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

    @Test
    @DisplayName("the main job's FPGA part runs the FIR job on the OpenCL driver's PoCL device and reports it")
    void fpgaPartRunsOnTheDriversDevice() {
        Assumptions.assumeTrue(
                io.flinkdevices.samples.fpga.OpenClDevices.list().first("Portable").isPresent(),
                "no PoCL platform here (pocl-opencl-icd, OCL_ICD_VENDORS as samples/pom.xml sets it)");
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        boolean ok;
        try (PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8)) {
            ok = DevicesJob.runFpga(
                    DevicesJob.fpgaOptions("--samples", "20000", "--platform-pattern", "Portable"), out);
        }
        String report = buffer.toString(StandardCharsets.UTF_8);
        System.out.println(report);
        assertThat(ok).isTrue();
        assertThat(report)
                .contains("flink-devices OpenCL driver (device.types ACCELERATOR,CPU)")
                .contains("FirJob: 20000 samples")
                .contains("OpenCL device #0 'pthread-")
                .contains("of platform #1 'Portable Computing Language', kernel built from fir.cl")
                .contains("OpenCL path: 2 subtask(s), 20000 samples")
                .contains(" 0 beyond tolerance");
    }

    @Test
    @DisplayName("the main job's FPGA part fails, naming the driver's WARN, when OpenCL exists but the driver hands out nothing")
    void fpgaPartFailsWithoutADevice() {
        Assumptions.assumeTrue(
                io.flinkdevices.samples.fpga.OpenClDevices.list().first("Portable").isPresent(),
                "no PoCL platform here (pocl-opencl-icd, OCL_ICD_VENDORS as samples/pom.xml sets it)");
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        boolean ok;
        try (PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8)) {
            // no OpenCL device of type CUSTOM here: the driver fails, Flink drops the resource
            ok = DevicesJob.runFpga(
                    DevicesJob.fpgaOptions("--samples", "2000", "--device-types", "CUSTOM"), out);
        }
        String report = buffer.toString(StandardCharsets.UTF_8);
        System.out.println(report);
        assertThat(ok).isFalse();
        assertThat(report)
                .contains("CPU path, because the TaskManager received no 'fpga' device")
                .contains("No subtask received an OpenCL device: see the TaskManager's WARN above.");
    }
}
