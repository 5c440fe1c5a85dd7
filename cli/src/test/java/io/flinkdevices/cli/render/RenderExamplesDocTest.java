package io.flinkdevices.cli.render;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.CliRun;
import io.flinkdevices.cli.TestPlugins;
import io.flinkdevices.fpga.OpenClFpgaDriverFactory;
import io.flinkdevices.nvidia.NvidiaGpuDriverFactory;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code render kubernetes} and {@code render yarn} examples of {@code docs/reference/deployment.md} are
 * what the commands print: the documented configuration (the NVIDIA driver in MIG mode and the
 * OpenCL/FPGA driver) rendered with the real drivers' plugins, its folder shown as the documented
 * one.
 */
class RenderExamplesDocTest {

    private static final Path REPO =
            Path.of(System.getProperty("flinkdevices.repo.root", "..")).toAbsolutePath().normalize();

    private static final String DOC_CONF = "/tmp/cli-demo/flink/conf";

    /** The configuration the example's prose describes. */
    static final List<String> CONFIG =
            List.of(
                    "external-resources: gpu;fpga",
                    "external-resource.gpu.driver-factory.class: " + NvidiaGpuDriverFactory.class.getName(),
                    "external-resource.gpu.amount: 2",
                    "external-resource.gpu.param.mig: true",
                    "external-resource.gpu.param.mig.profile: 1g.10gb",
                    "external-resource.fpga.driver-factory.class: " + OpenClFpgaDriverFactory.class.getName(),
                    "external-resource.fpga.amount: 1",
                    "external-resource.fpga.param.kubernetes.resource-name: fpga.intel.com/arria10.dcp1.2-nlb0");

    @TempDir Path home;

    @ParameterizedTest(name = "render {0}")
    @ValueSource(strings = {"kubernetes", "yarn"})
    @DisplayName("docs/reference/deployment.md shows what render prints for its example configuration")
    void docShowsTheOutput(String deployment) throws Exception {
        Path conf = Files.createDirectories(home.resolve("flink/conf"));
        Path plugins = Files.createDirectories(home.resolve("flink/plugins"));
        TestPlugins.realDrivers(plugins);
        Files.writeString(conf.resolve("config.yaml"), String.join("\n", CONFIG) + "\n");

        CliRun run = CliRun.run("render", deployment, "--conf-dir", conf.toString());

        assertThat(run.exitCode()).as(run.err()).isZero();
        String printed = run.out().replace(conf.toString(), DOC_CONF);
        String command = "$ bin/flink-devices render " + deployment + " --conf-dir " + DOC_CONF;
        assertThat(documented(command))
                .as("the block after '%s' in docs/reference/deployment.md", command)
                .isEqualTo(printed);
    }

    /** The lines of the documented example after the command line. */
    private static String documented(String command) throws Exception {
        String doc = Files.readString(REPO.resolve("docs/reference/deployment.md"));
        Matcher m = Pattern.compile("(?s)```\\n" + Pattern.quote(command) + "\\n(.*?)```\\n").matcher(doc);
        assertThat(m.find()).as("docs/reference/deployment.md has a block starting with '%s'", command).isTrue();
        return m.group(1);
    }
}
