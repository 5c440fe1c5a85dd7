package io.flinkdevices.samples;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.samples.ml.MlPredictLocal;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.fake.FakeAmdHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

class DevicesJobITCase {

    @Test
    @DisplayName("the main job's ML_PREDICT part: every row comes back once with the scores Java computes, in one line")
    void mlPredictPart() throws Exception {
        MlPredictLocal.Outcome outcome = MlPredictLocal.predict();
        assertThat(outcome.rows).as(outcome.summary()).isEqualTo(1000);
        assertThat(outcome.right).as(outcome.summary()).isEqualTo(1000);
        assertThat(outcome.duplicates).as(outcome.summary()).isZero();
        assertThat(outcome.ok()).isTrue();
        assertThat(outcome.summary()).startsWith("ML_PREDICT ('provider' = 'onnx'").contains("1000 of 1000 rows back,"
                + " 1000 with scores equal to x W + b computed in Java.").doesNotContain("\n");
    }

    @Test
    @DisplayName("every subtask of the main job uses its own GPU from the NVIDIA driver plugin")
    void everySubtaskGetsItsOwnDevice() throws Exception {
        List<DeviceReport.Line> lines = DevicesJob.run(true, 4, 2);

        assertThat(lines).extracting(l -> l.subtask).containsExactly(0, 1);
        for (DeviceReport.Line line : lines) {
            assertThat(line.devices)
                    .as("GPUs the TaskManager received")
                    .extracting(d -> d.gpu().orElseThrow().getUuid().orElseThrow())
                    .containsExactly(FakeNvidiaHost.gpuUuid(0), FakeNvidiaHost.gpuUuid(1));
            assertThat(line.picked).isNotNull();
            assertThat(line.share).as("a whole GPU leased").isEqualTo(1.0);
            assertThat(line.resource).isEqualTo("gpu");
            GpuInfo gpu = line.picked.gpu().orElseThrow();
            assertThat(gpu.getVendor()).isEqualTo("nvidia");
            assertThat(gpu.getArchitecture()).contains("sm_90");
            assertThat(gpu.getVisibleDevicesEnv()).contains("CUDA_VISIBLE_DEVICES");
        }
        List<GpuInfo> picked = lines.stream().map(l -> l.picked.gpu().orElseThrow()).collect(Collectors.toList());
        assertThat(picked).doesNotHaveDuplicates();
    }

    @Test
    @DisplayName("the main job's AMD part: every subtask uses its own MI300X compute partition from the AMD driver plugin")
    void amdPartHandsOutPartitions() throws Exception {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        boolean ok = DevicesJob.runAmd(new PrintStream(buf, true, StandardCharsets.UTF_8));
        String report = buf.toString(StandardCharsets.UTF_8);

        assertThat(ok).as(report).isTrue();
        assertThat(report)
                .contains("flink-devices AMD driver, unit partition, a simulated host")
                .contains(", gpu: leased #0 (whole), GPU #0 GPU-" + FakeAmdHost.uniqueId(0, 0) + "/0 (AMD Instinct MI300X OAM, 48 GiB, ROCR_VISIBLE_DEVICES=0)")
                .contains(", gpu: leased #1 (whole), GPU #1 GPU-" + FakeAmdHost.uniqueId(0, 1) + "/1 (AMD Instinct MI300X OAM, 48 GiB, ROCR_VISIBLE_DEVICES=1)")
                .containsPattern("subtask 0 on TaskManager \\S+ pid \\d+, gpu: leased #[01] ")
                .containsPattern("subtask 1 on TaskManager \\S+ pid \\d+, gpu: leased #[01] ")
                .contains("Every subtask received a device.");
    }

    @Test
    @DisplayName("the main job's RDMA part: every subtask uses the healthy RoCE v2 port of the fake host")
    void rdmaPartHandsOutThePort() throws Exception {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        boolean ok = DevicesJob.runRdma(new PrintStream(buf, true, StandardCharsets.UTF_8));
        String report = buf.toString(StandardCharsets.UTF_8);

        assertThat(ok).as(report).isTrue();
        String port = "uses RDMA port mlx5_bond_0/1 (Ethernet, RoCE v2 GID #3 " + io.flinkdevices.testkit.fake.FakeRdmaHost.ipv4Gid("10.1.2.3")
                + ", bond0, 100 Gb/s)";
        assertThat(report)
                .contains("flink-devices RDMA driver, link-layer ethernet (RoCE), a simulated host")
                .contains("subtask 0: " + port)
                .contains("subtask 1: " + port)
                .contains("Every subtask received a device.");
    }

    @Test
    @DisplayName("the main job's FPGA part runs the FIR job on the OpenCL driver's PoCL device and reports it")
    void fpgaPartRunsOnTheDriversDevice() {
        assumePoCl();
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        boolean ok;
        PrintStream stdout = System.out;
        // the job's report and whatever the tasks print to stdout, in one place
        try (PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8)) {
            System.setOut(out);
            ok = DevicesJob.runFpga(
                    DevicesJob.fpgaOptions("--samples", "20000", "--platform-pattern", "Portable"), out);
        } finally {
            System.setOut(stdout);
        }
        String report = buffer.toString(StandardCharsets.UTF_8);
        System.out.println(report);
        assertThat(ok).isTrue();
        // PoCL names its CPU device by version ("pthread-<cpu>" in PoCL 3 to 5, "cpu-<arch>-<cpu>"
        // in PoCL 6) and its platform number depends on what else is registered: match any.
        assertThat(report)
                .contains("flink-devices OpenCL driver (device.types ACCELERATOR,CPU, platform.pattern Portable),"
                        + " this host's OpenCL devices of those types: [Portable Computing Language / ")
                .doesNotContain("Oclgrind")
                .contains("FirJob: 20000 samples")
                .containsPattern("OpenCL device #0 '[^']+' of platform #\\d+ 'Portable Computing Language', kernel built from fir.cl")
                .contains("OpenCL path: 2 subtask(s), 20000 samples")
                .contains(" 0 beyond tolerance");
        assertThat(report.split("FirJob subtask 0: ", -1)).as("the subtask's line, printed once").hasSize(2);
        assertThat(report.split("FirJob subtask 1: ", -1)).as("the subtask's line, printed once").hasSize(2);
    }

    @Test
    @DisplayName("the main job's FPGA part fails, printing the driver's reason, when OpenCL exists but no device has the requested type")
    void fpgaPartFailsWithoutADevice() {
        assumePoCl();
        // no OpenCL device of type CUSTOM here: the driver fails, Flink drops the resource
        Report r = runFpga("--samples", "2000", "--device-types", "CUSTOM");

        assertThat(r.ok).isFalse();
        assertThat(r.text)
                .contains("flink-devices OpenCL driver (device.types CUSTOM), this host's OpenCL devices of those types: none of this host's")
                .contains("CPU path, because the TaskManager received no 'fpga' device")
                .contains("No subtask received an OpenCL device: the TaskManager dropped the resource because its driver failed:"
                        + " Asked for 1 OpenCL devices (external-resource.fpga.amount) of types CUSTOM")
                .doesNotContain("WARN above");
    }

    @Test
    @DisplayName("with a bitstream that does not exist, the FPGA part prints the driver's program.path message")
    void fpgaPartNamesABadProgramPath() {
        assumePoCl();
        Report r = runFpga("--samples", "2000", "--bitstream", "/no/such/file");

        assertThat(r.ok).isFalse();
        assertThat(r.text)
                .contains("No subtask received an OpenCL device: the TaskManager dropped the resource because its driver failed:")
                .contains("external-resource.fpga.param.program.path: no such file /no/such/file");
    }

    @Test
    @DisplayName("with --devices cpu the FPGA part says no device was asked for, and succeeds when the output is right")
    void fpgaPartOnTheCpu() {
        Report r = runFpga("--samples", "2000", "--devices", "cpu");

        assertThat(r.ok).isTrue();
        assertThat(r.text)
                .contains("FPGA sample job with --devices cpu: no OpenCL driver and no device; every subtask filters on the CPU.")
                .contains("CPU path: 2 subtask(s), 2000 samples")
                .contains(" 0 beyond tolerance")
                .doesNotContain("No subtask received")
                .doesNotContain("WARN");
    }

    @Test
    @DisplayName("bin/run-devices-job --help prints the usage without building anything, exit 0")
    void scriptHelp() throws Exception {
        Path script = Path.of("..", "bin", "run-devices-job").toAbsolutePath().normalize();
        Assumptions.assumeTrue(Files.isExecutable(script), "no launcher at " + script);
        Process p = new ProcessBuilder(script.toString(), "--samples", "1", "--help").redirectErrorStream(true).start();
        try {
            p.getOutputStream().close();
            String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).isZero();
            assertThat(text).isEqualTo(DevicesJob.usage()).doesNotContain("Building");
        } finally {
            p.destroyForcibly();
        }
    }

    private static void assumePoCl() {
        Assumptions.assumeTrue(
                io.flinkdevices.samples.fpga.OpenClDevices.list().first("Portable").isPresent(),
                "no PoCL platform here (pocl-opencl-icd, OCL_ICD_VENDORS as samples/pom.xml sets it)");
    }

    private static final class Report {
        final boolean ok;
        final String text;

        Report(boolean ok, String text) {
            this.ok = ok;
            this.text = text;
        }
    }

    private static Report runFpga(String... args) {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        boolean ok;
        try (PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8)) {
            ok = DevicesJob.runFpga(DevicesJob.fpgaOptions(args), out);
        }
        String text = buffer.toString(StandardCharsets.UTF_8);
        System.out.println(text);
        return new Report(ok, text);
    }
}
