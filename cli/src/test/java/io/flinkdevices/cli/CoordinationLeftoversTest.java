package io.flinkdevices.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.flinkdevices.nvidia.NvidiaGpuDriverFactory;
import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * Every command on a TaskManager host whose NVIDIA resource has coordination on, where no
 * TaskManager runs yet: the coordination file does not exist, and after {@code discover}, {@code
 * doctor}, {@code doctor --no-devices} and {@code render} it still does not (nor its lock file),
 * though {@code discover} and {@code doctor} asked the driver for the GPUs.
 */
@ExtendWith(StopDeviceMonitors.class)
class CoordinationLeftoversTest {

    @TempDir Path home;
    private Path conf;
    private Path run;

    @BeforeEach
    void setUp() throws Exception {
        conf = Files.createDirectories(home.resolve("conf"));
        TestPlugins.realDrivers(Files.createDirectories(home.resolve("plugins")));
        run = Files.createDirectories(home.resolve("run"));
    }

    private void config(Path smi, String coordinationFileLine) throws Exception {
        Files.writeString(
                conf.resolve("config.yaml"),
                String.join(
                        "\n",
                        "external-resources: gpu",
                        "external-resource.gpu.driver-factory.class: " + NvidiaGpuDriverFactory.class.getName(),
                        "external-resource.gpu.amount: 2",
                        "external-resource.gpu.kubernetes.config-key: nvidia.com/gpu",
                        "external-resource.gpu.param.backend: nvidia-smi",
                        "external-resource.gpu.param.nvidia-smi.path: " + smi,
                        "external-resource.gpu.param.coordination.enabled: true",
                        coordinationFileLine,
                        "taskmanager.numberOfTaskSlots: 2",
                        ""));
    }

    private List<CliRun> everyCommand() {
        String dir = conf.toString();
        return List.of(
                CliRun.run("discover", "--conf-dir", dir),
                CliRun.run("discover", "--conf-dir", dir, "--json"),
                CliRun.run("doctor", "--conf-dir", dir),
                CliRun.run("doctor", "--conf-dir", dir, "--no-devices"),
                CliRun.run("render", "kubernetes", "--conf-dir", dir),
                CliRun.run("render", "yarn", "--conf-dir", dir));
    }

    @Test
    @DisplayName("the configured coordination file: its folder stays empty after every command, each exits 0")
    void configuredFile() throws Exception {
        Path smi = FakeNvidiaHost.installH100s(FakeHost.create(home.resolve("host")), 2);
        config(smi, "external-resource.gpu.param.coordination.file: " + run.resolve("gpu.coordination"));

        for (CliRun r : everyCommand()) {
            assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
            try (Stream<Path> left = Files.list(run)) {
                assertThat(left).as("left in " + run + " after\n" + r.out()).isEmpty();
            }
        }
    }

    @Test
    @DisplayName("the default coordination file in java.io.tmpdir is not created either")
    void defaultFile() throws Exception {
        Path file = CoordinationParams.defaultFile("nvidia-gpu");
        Path lock = file.resolveSibling(file.getFileName() + ".lock");
        assumeFalse(Files.exists(file) || Files.exists(lock), file + " exists already (a TaskManager of this host?)");
        Path smi = FakeNvidiaHost.installH100s(FakeHost.create(home.resolve("host")), 2);
        config(smi, "");

        for (CliRun r : everyCommand()) {
            assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
            assertThat(file).as("after\n" + r.out()).doesNotExist();
            assertThat(lock).as("after\n" + r.out()).doesNotExist();
        }
    }
}
