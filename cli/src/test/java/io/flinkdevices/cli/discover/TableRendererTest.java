package io.flinkdevices.cli.discover;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

class TableRendererTest {

    private static String render(DiscoveryReport report) {
        StringWriter text = new StringWriter();
        TableRenderer.render(report, new PrintWriter(text));
        return text.toString().replace(System.lineSeparator(), "\n");
    }

    @Test
    @DisplayName(
            "shows where Flink's files are, one line per resource, each device, and each problem")
    void fullReport() {
        String table = render(Reports.of(List.of(), Reports.okGpu(), Reports.brokenFpga()));

        assertThat(table)
                .isEqualTo(
                        "Flink configuration  /opt/flink/conf/config.yaml\n"
                            + "Plugins directory    /opt/flink/plugins (from --plugins-dir):"
                            + " gpu-driver\n"
                            + "\n"
                            + "RESOURCE  STATUS  AMOUNT  DEVICES  FACTORY\n"
                            + "gpu       ok      2       2        com.example.GpuFactory\n"
                            + "fpga      error   -       -        -\n"
                            + "\n"
                            + "gpu: 2 devices\n"
                            + "  kind  index  uuid\n"
                            + "  gpu   0      GPU-0\n"
                            + "  gpu   1      GPU-1\n"
                            + "\n"
                            + "Problems:\n"
                            + "  fpga: external-resource.fpga.driver-factory.class: not set\n"
                            + "  fpga: external-resource.fpga.amount: 'two' is not a whole number\n"
                            + "\n"
                            + "1 of 2 resources ok.\n");
    }

    @Test
    @DisplayName("says so when every resource is ok, and has no problems section")
    void allOk() {
        String table = render(Reports.of(List.of(), Reports.okGpu()));

        assertThat(table).endsWith("  gpu   1      GPU-1\n\nAll 1 resources ok.\n");
        assertThat(table).doesNotContain("Problems");
    }

    @Test
    @DisplayName("lists plugin problems, and does not call the run ok")
    void pluginProblems() {
        String table =
                render(Reports.of(List.of("a plugin's factory cannot be loaded"), Reports.okGpu()));

        assertThat(table)
                .contains("Plugin problems:\n  a plugin's factory cannot be loaded\n")
                .endsWith("1 of 1 resources ok.\n");
    }

    @Test
    @DisplayName("explains an empty external-resources")
    void noResources() {
        String table = render(Reports.of(List.of()));

        assertThat(table)
                .contains(
                        "No external resources configured: external-resources is not set or is"
                                + " 'none' in /opt/flink/conf/config.yaml.")
                .endsWith("Nothing to discover.\n");
    }

    @Test
    @DisplayName("marks a property a device lacks with a dash")
    void missingProperty() {
        var gpu1 = Reports.gpu(1, "GPU-1");
        gpu1.remove("uuid");
        ResourceReport r =
                new ResourceReport(
                        "gpu",
                        "f",
                        2L,
                        ResourceStatus.OK,
                        List.of(),
                        List.of(Reports.gpu(0, "GPU-0"), gpu1));

        assertThat(render(Reports.of(List.of(), r))).contains("  gpu   1      -\n");
    }

    @Test
    @DisplayName("memory is shown in GiB in the table (the JSON keeps the bytes)")
    void memoryInGib() {
        assertThat(TableRenderer.gib("17179869184")).isEqualTo("16 GiB");
        assertThat(TableRenderer.gib("85520809984")).isEqualTo("79.6 GiB");
        assertThat(TableRenderer.gib("not a number")).isEqualTo("not a number");
        ResourceReport r = new ResourceReport("gpu", "com.example.GpuFactory", 1L, ResourceStatus.OK, List.of(),
                List.of(java.util.Map.of("index", "0", "memory-bytes", "17179869184")));
        assertThat(render(Reports.of(List.of(), r))).containsPattern("memory +index|index +memory").containsPattern("16 GiB");
    }

    @Test
    @DisplayName("an FPGA's global memory is in GiB too, under global-memory")
    void fpgaMemoryInGib() {
        ResourceReport r = new ResourceReport("fpga", "com.example.FpgaFactory", 1L, ResourceStatus.OK, List.of(),
                List.of(java.util.Map.of("index", "0", "global-memory-bytes", "34359738368")));

        assertThat(render(Reports.of(List.of(), r)))
                .containsPattern("global-memory +index|index +global-memory")
                .contains("32 GiB")
                .doesNotContain("34359738368")
                .doesNotContain("global-memory-bytes");
    }
}
