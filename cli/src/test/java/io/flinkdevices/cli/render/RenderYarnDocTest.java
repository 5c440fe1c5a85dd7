package io.flinkdevices.cli.render;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.CliRun;
import io.flinkdevices.cli.TestPlugins;
import io.flinkdevices.fpga.OpenClFpgaDriverFactory;
import io.flinkdevices.nvidia.NvidiaGpuDriverFactory;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code render yarn} example of {@code docs/operators.md} is what the command prints: the
 * documented configuration (the NVIDIA driver in MIG mode and the OpenCL/FPGA driver) rendered with
 * the real drivers' plugins, its folder shown as the documented one.
 */
class RenderYarnDocTest {

    private static final Path REPO =
            Path.of(System.getProperty("flinkdevices.repo.root", "..")).toAbsolutePath().normalize();

    private static final String DOC_CONF = "/tmp/cli-demo/flink/conf";
    private static final String COMMAND = "$ bin/flink-devices render yarn --conf-dir " + DOC_CONF;

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

    @Test
    @DisplayName("docs/operators.md shows what render yarn prints for its example configuration")
    void docShowsTheOutput() throws Exception {
        Path conf = Files.createDirectories(home.resolve("flink/conf"));
        Path plugins = Files.createDirectories(home.resolve("flink/plugins"));
        TestPlugins.realDrivers(plugins);
        Files.writeString(conf.resolve("config.yaml"), String.join("\n", CONFIG) + "\n");

        CliRun run = CliRun.run("render", "yarn", "--conf-dir", conf.toString());

        assertThat(run.exitCode()).as(run.err()).isZero();
        String printed = run.out().replace(conf.toString(), DOC_CONF);
        assertThat(documented()).as("the block after '%s' in docs/operators.md", COMMAND).isEqualTo(printed);
    }

    /** The lines of the documented example after the command line. */
    private static String documented() throws Exception {
        String doc = Files.readString(REPO.resolve("docs/operators.md"));
        Matcher m = Pattern.compile("(?s)```\\n" + Pattern.quote(COMMAND) + "\\n(.*?)```\\n").matcher(doc);
        assertThat(m.find()).as("docs/operators.md has a block starting with '%s'", COMMAND).isTrue();
        return m.group(1);
    }
}
