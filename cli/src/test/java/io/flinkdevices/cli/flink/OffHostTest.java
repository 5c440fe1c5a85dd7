package io.flinkdevices.cli.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.CliRun;
import io.flinkdevices.fpga.OpenClFpgaDriverFactory;
import io.flinkdevices.nvidia.NvidiaGpuDriverFactory;
import io.flinkdevices.sdk.config.DriverParams;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code render} and {@code doctor --no-devices} on a machine that is not a TaskManager host: the
 * TaskManagers' files (the tool, the coordination file's folder, a bitstream) are notes, not
 * failures; a resource that cannot be rendered names the key to set.
 */
class OffHostTest {

    @TempDir Path home;
    private Path conf;
    private Path plugins;

    @BeforeEach
    void setUp() throws Exception {
        conf = Files.createDirectories(home.resolve("conf"));
        plugins = Files.createDirectories(home.resolve("plugins"));
        io.flinkdevices.cli.TestPlugins.realDrivers(plugins);
    }

    private void gpuConfig(String... more) throws Exception {
        StringBuilder y = new StringBuilder(String.join("\n",
                "external-resources: gpu",
                "external-resource.gpu.driver-factory.class: " + NvidiaGpuDriverFactory.class.getName(),
                "external-resource.gpu.amount: 2",
                "external-resource.gpu.param.nvidia-smi.path: /nowhere/bin/nvidia-smi",
                "external-resource.gpu.param.coordination.enabled: true",
                "external-resource.gpu.param.coordination.file: /nowhere/run/gpu.coordination",
                ""));
        for (String line : more) {
            y.append(line).append('\n');
        }
        Files.writeString(conf.resolve("config.yaml"), y.toString());
    }

    @Test
    @DisplayName("render: paths of the TaskManager host that do not exist here are notes, the resource is rendered, exit 0")
    void renderOffHost() throws Exception {
        gpuConfig();

        CliRun run = CliRun.run("render", "kubernetes", "--conf-dir", conf.toString(), "--plugins-dir", plugins.toString());

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.err()).isEmpty();
        assertThat(run.out())
                .contains("external-resource.gpu.kubernetes.config-key: \"nvidia.com/gpu\"")
                .contains("# note: external-resource.gpu.param.nvidia-smi.path: /nowhere/bin/nvidia-smi does not exist on this machine;"
                        + " not checked here, it must exist on every TaskManager host")
                .contains("# note: external-resource.gpu.param.coordination.file: /nowhere/run/gpu.coordination does not exist");
        assertThat(System.getProperty(DriverParams.HOST_PATHS_PROPERTY)).as("the check is back on after the command").isNull();
    }

    @Test
    @DisplayName("doctor --no-devices: the same paths are notes and nothing is wrong; doctor on the host still reports them")
    void doctorOffHost() throws Exception {
        gpuConfig();

        CliRun off = CliRun.run("doctor", "--no-devices", "--conf-dir", conf.toString(), "--plugins-dir", plugins.toString());
        assertThat(off.exitCode()).as(off.out()).isZero();
        assertThat(off.out())
                .contains("note: external-resource.gpu.param.nvidia-smi.path: /nowhere/bin/nvidia-smi does not exist on this machine")
                .contains("No problems found.");

        CliRun on = CliRun.run("doctor", "--conf-dir", conf.toString(), "--plugins-dir", plugins.toString());
        assertThat(on.exitCode()).isEqualTo(1);
        assertThat(on.out()).contains("external-resource.gpu.param.nvidia-smi.path").contains("no such file /nowhere/bin/nvidia-smi");
    }

    @Test
    @DisplayName("a resource whose driver names no Kubernetes resource: one line naming the key to set, exit 1")
    void unrenderableResourceNamesTheKey() throws Exception {
        Files.writeString(conf.resolve("config.yaml"), String.join("\n",
                "external-resources: fpga",
                "external-resource.fpga.driver-factory.class: " + OpenClFpgaDriverFactory.class.getName(),
                "external-resource.fpga.amount: 1",
                ""));

        CliRun run = CliRun.run("render", "kubernetes", "--conf-dir", conf.toString(), "--plugins-dir", plugins.toString());

        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.err().strip())
                .isEqualTo("flink-devices: render: fpga: the driver's Kubernetes decorator names no resource for 1 devices in this"
                        + " configuration; set external-resource.fpga.param.kubernetes.resource-name (flink-devices drivers) or"
                        + " external-resource.fpga.kubernetes.config-key to the name the cluster advertises the devices under");
    }
}
