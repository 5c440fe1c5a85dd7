package io.flinkdevices.cli.render;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.amd.AmdGpuDriverFactory;
import io.flinkdevices.cli.CliRun;
import io.flinkdevices.cli.flink.DriverDecorators.DraDevices;
import io.flinkdevices.fpga.OpenClFpgaDriverFactory;
import io.flinkdevices.nvidia.NvidiaGpuDriverFactory;
import io.flinkdevices.rdma.RdmaDriverFactory;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What {@code render kubernetes --dra} says when a resource cannot go into a claim. */
class DraRenderCommandTest {

    @TempDir static Path home;
    private static Path plugins;
    private static int configs;

    @BeforeAll
    static void plugins() throws Exception {
        plugins = Files.createDirectories(home.resolve("plugins"));
        io.flinkdevices.cli.TestPlugins.realDrivers(plugins);
    }

    private static CliRun render(String config, String... extra) throws Exception {
        Path conf = Files.createDirectories(home.resolve("conf" + configs++));
        Files.writeString(conf.resolve("config.yaml"), config);
        List<String> args = new ArrayList<>(List.of("render", "kubernetes", "--conf-dir", conf.toString(),
                "--plugins-dir", plugins.toString()));
        args.addAll(List.of(extra));
        return CliRun.run(args.toArray(String[]::new));
    }

    private static final String GPU = String.join("\n",
            "external-resource.gpu.driver-factory.class: " + NvidiaGpuDriverFactory.class.getName(),
            "external-resource.gpu.amount: 1", "");
    private static final String FPGA = String.join("\n",
            "external-resource.fpga.driver-factory.class: " + OpenClFpgaDriverFactory.class.getName(),
            "external-resource.fpga.amount: 1", "");

    @Test
    @DisplayName("a driver without a DRA device class is one line naming the key to set, exit 1, the rest rendered")
    void noDeviceClass() throws Exception {
        CliRun run = render("external-resources: gpu;fpga\n" + GPU + FPGA, "--dra");

        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.err().lines()).containsExactly(
                "flink-devices: render: fpga: the driver of factory " + OpenClFpgaDriverFactory.class.getName()
                        + " knows no DRA DeviceClass for its devices; set"
                        + " external-resource.fpga.param.kubernetes.dra.device-class to the DeviceClass your"
                        + " cluster's DRA driver for these devices offers (kubectl get deviceclasses)");
        assertThat(DraOutputs.claimTemplates(run.out())).hasSize(1);
        assertThat(run.out()).contains("resourceClaimTemplateName: \"flink-devices-gpu\"").doesNotContain("fpga\"");
    }

    @Test
    @DisplayName("an AMD partition given by compute mode alone names the partition key to complete")
    void amdComputeModeOnly() throws Exception {
        CliRun run = render(String.join("\n", "external-resources: amd",
                "external-resource.amd.driver-factory.class: " + AmdGpuDriverFactory.class.getName(),
                "external-resource.amd.amount: 1",
                "external-resource.amd.param.unit: partition",
                "external-resource.amd.param.partition.profile: CPX", ""), "--dra");

        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.err().lines()).singleElement().asString()
                .startsWith("flink-devices: render: amd: external-resource.amd.param.partition.profile: is 'CPX',"
                        + " a compute mode without a memory mode");
    }

    @Test
    @DisplayName("the same PCIe root needs resources whose devices publish it: an FPGA does not")
    void sameRootNeedsPcieRoot() throws Exception {
        CliRun run = render("external-resources: gpu;fpga\n" + GPU + FPGA
                        + "external-resource.fpga.param.kubernetes.dra.device-class: fpga.example.com\n",
                "--dra", "--dra-same-pcie-root", "gpu,fpga");

        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.err().lines()).containsExactly(
                "flink-devices: render: --dra-same-pcie-root gpu,fpga: fpga's driver does not say its devices"
                        + " publish resource.kubernetes.io/pcieRoot; the resources get one claim each");
        assertThat(DraOutputs.claimTemplates(run.out())).hasSize(2);
    }

    @Test
    @DisplayName("a GPU and an RDMA NIC without --dra-same-pcie-root get a note that suggests it")
    void suggestsSameRoot() throws Exception {
        CliRun run = render(String.join("\n", "external-resources: gpu;rdma", GPU
                + "external-resource.rdma.driver-factory.class: " + RdmaDriverFactory.class.getName(),
                "external-resource.rdma.amount: 1",
                "external-resource.rdma.param.kubernetes.dra.device-class: dranet.net", ""), "--dra");

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).contains("# gpu, rdma: their devices publish resource.kubernetes.io/pcieRoot;"
                + " --dra-same-pcie-root gpu,rdma puts them into one claim under one PCIe root");
    }

    @Test
    @DisplayName("--dra-same-pcie-root with an empty entry (',,', 'gpu,', 'gpu,,rdma') is a usage error naming the option")
    void sameRootEmptyEntry() throws Exception {
        for (String value : new String[] {",,", "gpu,", "gpu,,rdma", " "}) {
            CliRun run = render("external-resources: gpu\n" + GPU, "--dra", "--dra-same-pcie-root", value);

            assertThat(run.exitCode()).as(value).isEqualTo(2);
            assertThat(run.err())
                    .as(value)
                    .contains("--dra-same-pcie-root '" + value + "': an empty entry; expected resource names of"
                            + " external-resources separated by ',' (gpu,rdma)");
            assertThat(run.out()).as(value).isEmpty();
        }
    }

    @Test
    @DisplayName("--dra-same-pcie-root without --dra is a usage error")
    void sameRootNeedsDra() throws Exception {
        CliRun run = render("external-resources: gpu\n" + GPU, "--dra-same-pcie-root", "gpu,rdma");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("--dra-same-pcie-root needs --dra");
    }

    @Test
    @DisplayName("answers that cannot go into a claim are refused with what is wrong")
    void invalidAnswers() {
        DraDevices bad = new DraDevices("Gpu Class", "gpu.example.com", Map.of("product-name", "x"),
                Map.of(), Map.of("memory", "lots"), false);
        assertThat(DraCollector.invalid(bad)).containsExactly(
                "the device class 'Gpu Class' is not a DNS subdomain",
                "'product-name' is not a DRA attribute or capacity name (a C identifier of at most 32 characters)",
                "the capacity memory must be a positive Kubernetes quantity but is 'lots'");
    }

    @Test
    @DisplayName("claim names are DNS labels made from the resource names")
    void dnsLabels() {
        assertThat(DraRender.dnsLabel("GPU_fast.1")).isEqualTo("gpu-fast-1");
        assertThat(DraRender.dnsLabel("__")).isEmpty();
    }

    @Test
    @DisplayName("CEL string literals escape quotes, backslashes and control characters")
    void celLiterals() {
        assertThat(DraCel.literal("a'b\\c\nd\"")).isEqualTo("'a\\'b\\\\c\\nd\"'");
    }
}
