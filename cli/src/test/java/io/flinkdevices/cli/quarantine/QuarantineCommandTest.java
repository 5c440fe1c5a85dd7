package io.flinkdevices.cli.quarantine;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.CliRun;
import io.flinkdevices.cli.TestPlugins;
import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.coordination.DeviceQuarantine;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * {@code discover}, {@code doctor} and {@code quarantine list|clear} through the real CLI, on a
 * host (fake RDMA sysfs, the real RDMA plugin) whose coordination file holds a quarantined port.
 */
@DisplayName("flink-devices quarantine")
@ExtendWith(StopDeviceMonitors.class)
class QuarantineCommandTest {

    @TempDir Path home;
    private Path conf;
    private Path plugins;
    private Path file;

    @BeforeEach
    void host() throws Exception {
        conf = Files.createDirectories(home.resolve("conf"));
        plugins = Files.createDirectories(home.resolve("plugins"));
        TestPlugins.realDrivers(plugins);
        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true, true).installOn(FakeHost.create(home.resolve("host")));
        file = home.resolve("rdma.coordination");
        writeConfig(sys, "true", null);
    }

    private void writeConfig(FakeFileTree sys, String coordination, String lockTimeout) throws Exception {
        Files.writeString(conf.resolve("config.yaml"), String.join("\n",
                "external-resources: rdma",
                "external-resource.rdma.driver-factory.class: io.flinkdevices.rdma.RdmaDriverFactory",
                "external-resource.rdma.amount: 1",
                "external-resource.rdma.param.sysfs.root: " + sys.root(),
                "external-resource.rdma.param.coordination.enabled: " + coordination,
                "external-resource.rdma.param.coordination.file: " + file,
                lockTimeout == null ? "" : "external-resource.rdma.param.coordination.lock-timeout: " + lockTimeout,
                ""));
    }

    private DeviceQuarantine quarantine() {
        return DeviceCoordinator.create(CoordinationParams.of(file)).quarantine();
    }

    private CliRun cli(String... args) {
        return CliRun.run(java.util.Map.of(), args);
    }

    @Test
    @DisplayName("discover, doctor and list show a quarantined port with reason, since, who and the exact clear command; clear brings it back")
    void showAndClear() throws Exception {
        quarantine().add("mlx5_0/2", "port mlx5_0/2 state DOWN");
        String clear = "flink-devices quarantine clear --resource rdma --device mlx5_0/2";

        CliRun discover = cli("discover", "--conf-dir", conf.toString(), "--plugins-dir", plugins.toString());
        assertThat(discover.out())
                .contains("device mlx5_0/2 is out of service (quarantined): port mlx5_0/2 state DOWN; since ")
                .contains("seen by ")
                .contains("pid " + ProcessHandle.current().pid())
                .contains("once repaired: " + clear);

        CliRun doctor = cli("doctor", "--conf-dir", conf.toString(), "--plugins-dir", plugins.toString());
        assertThat(doctor.exitCode()).isEqualTo(1);
        assertThat(doctor.out()).contains("mlx5_0/2 is out of service (quarantined)").contains(clear);

        CliRun list = cli("quarantine", "list", "--conf-dir", conf.toString());
        assertThat(list.exitCode()).isEqualTo(1);
        assertThat(list.out()).contains("rdma: device mlx5_0/2 is out of service (quarantined): port mlx5_0/2 state DOWN")
                .contains(clear);

        CliRun cleared = cli(clear.substring("flink-devices ".length()).concat(" --conf-dir " + conf).split(" "));
        assertThat(cleared.exitCode()).as(cleared.err()).isZero();
        assertThat(cleared.out()).contains("Back in service").contains("mlx5_0/2");
        assertThat(DeviceQuarantine.peek(file)).isEmpty();
        assertThat(cli("quarantine", "list", "--conf-dir", conf.toString()).exitCode()).isZero();
        assertThat(DeviceCoordinator.create(CoordinationParams.of(file)).allocate(List.of("mlx5_0/2"), 1)).containsExactly("mlx5_0/2");
    }

    @Test
    @DisplayName("--all clears every port of the resource; --json lists what list prints")
    void clearAll() throws Exception {
        quarantine().add("mlx5_0/1", "a");
        quarantine().add("mlx5_0/2", "b");
        CliRun json = cli("quarantine", "list", "--conf-dir", conf.toString(), "--json");
        assertThat(json.out()).contains("\"device\": \"mlx5_0/1\"").contains("\"reason\": \"b\"")
                .contains("\"clear\": \"flink-devices quarantine clear --resource rdma --device mlx5_0/2\"");
        CliRun all = cli("quarantine", "clear", "--resource", "rdma", "--all", "--conf-dir", conf.toString());
        assertThat(all.exitCode()).isZero();
        assertThat(all.out()).contains("mlx5_0/1").contains("mlx5_0/2");
        assertThat(DeviceQuarantine.peek(file)).isEmpty();
        assertThat(cli("quarantine", "clear", "--resource", "rdma", "--all", "--conf-dir", conf.toString()).out())
                .contains("No device of resource rdma was out of service");
    }

    @Test
    @DisplayName("bad input: one clear message and the documented exit code, nothing changed")
    void badInput() throws Exception {
        quarantine().add("mlx5_0/1", "a");
        String c = conf.toString();
        CliRun notThere = cli("quarantine", "clear", "--resource", "rdma", "--device", "mlx5_9/1", "--conf-dir", c);
        assertThat(notThere.exitCode()).isEqualTo(1);
        assertThat(notThere.err()).contains("device 'mlx5_9/1' of resource rdma is not out of service in [" + file + "]; nothing changed");

        CliRun unknown = cli("quarantine", "clear", "--resource", "gpu", "--device", "0", "--conf-dir", c);
        assertThat(unknown.exitCode()).isEqualTo(2);
        assertThat(unknown.err()).contains("--resource: 'gpu' is not listed in external-resources (listed: rdma)");

        CliRun neither = cli("quarantine", "clear", "--resource", "rdma", "--conf-dir", c);
        assertThat(neither.exitCode()).isEqualTo(2);
        assertThat(neither.err()).contains("--device").contains("--all");

        CliRun both = cli("quarantine", "clear", "--resource", "rdma", "--device", "mlx5_0/1", "--all", "--conf-dir", c);
        assertThat(both.exitCode()).isEqualTo(2);
        assertThat(both.err()).contains("mutually exclusive");

        CliRun noSub = cli("quarantine", "--conf-dir", c);
        assertThat(noSub.exitCode()).isEqualTo(2);
        assertThat(noSub.err()).contains("Missing subcommand of 'flink-devices quarantine': list or clear");

        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).installOn(FakeHost.create(home.resolve("other")));
        writeConfig(sys, "false", null);
        CliRun off = cli("quarantine", "clear", "--resource", "rdma", "--all", "--conf-dir", c);
        assertThat(off.exitCode()).isEqualTo(2);
        assertThat(off.err()).contains("external-resource.rdma.param.coordination.enabled is not true");

        writeConfig(sys, "true", "soon");
        CliRun badTimeout = cli("quarantine", "clear", "--resource", "rdma", "--all", "--conf-dir", c);
        assertThat(badTimeout.exitCode()).isEqualTo(2);
        assertThat(badTimeout.err()).contains("external-resource.rdma.param.coordination.lock-timeout: expected a positive duration such as '10 s' but got 'soon'");

        assertThat(DeviceQuarantine.peek(file)).hasSize(1);
    }

    @Test
    @DisplayName("a coordination file whose lock another process keeps: exit 4 naming the key and the file, nothing changed")
    void lockedFile() throws Exception {
        quarantine().add("mlx5_0/1", "a");
        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).installOn(FakeHost.create(home.resolve("other")));
        writeConfig(sys, "true", "1 s");
        Process holder = new ProcessBuilder("flock", file + ".lock", "sleep", "60").start();
        try {
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (!Files.readString(Path.of("/proc/locks")).contains(":" + Files.getAttribute(Path.of(file + ".lock"), "unix:ino") + " ")
                    && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            CliRun run = cli("quarantine", "clear", "--resource", "rdma", "--all", "--conf-dir", conf.toString());
            assertThat(run.exitCode()).as(run.err()).isEqualTo(4);
            assertThat(run.err()).contains("external-resource.rdma.param.coordination.file").contains(file.toString());
        } finally {
            holder.destroyForcibly();
        }
        assertThat(DeviceQuarantine.peek(file)).hasSize(1);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"symbolic link", "folder", "FIFO", "FIFO as its lock file"})
    @DisplayName("a coordination file that cannot be used is refused by list and clear as discover, doctor and every TaskManager refuse it")
    void unusableFile(String kind) throws Exception {
        String expected;
        switch (kind) {
            case "symbolic link" -> {
                quarantine().add("mlx5_0/1", "port mlx5_0/1 state DOWN");
                Path real = Files.move(file, home.resolve("real.coordination"));
                Files.createSymbolicLink(file, real);
                expected = file + " is a symbolic link; coordination never follows one";
            }
            case "folder" -> {
                Files.createDirectories(file);
                expected = file + " is a folder, expected a file";
            }
            case "FIFO" -> {
                mkfifo(file);
                expected = file + " is a FIFO (named pipe); expected a regular file or no file";
            }
            default -> {
                mkfifo(Path.of(file + ".lock"));
                expected = file + ".lock is a FIFO (named pipe); expected a regular file or no file";
            }
        }
        String line = "flink-devices: external-resource.rdma.param.coordination.file: " + expected;
        CliRun list = cli("quarantine", "list", "--conf-dir", conf.toString());
        assertThat(list.exitCode()).as(list.out() + list.err()).isEqualTo(4);
        assertThat(list.err()).startsWith(line);
        assertThat(list.out()).doesNotContain("No device is out of service");
        CliRun json = cli("quarantine", "list", "--json", "--conf-dir", conf.toString());
        assertThat(json.exitCode()).isEqualTo(4);
        assertThat(json.out()).isEmpty();
        CliRun clear = cli("quarantine", "clear", "--resource", "rdma", "--all", "--conf-dir", conf.toString());
        assertThat(clear.exitCode()).as(clear.out() + clear.err()).isEqualTo(4);
        assertThat(clear.err()).startsWith(line);
        for (String command : List.of("discover", "doctor")) {
            CliRun run = cli(command, "--conf-dir", conf.toString(), "--plugins-dir", plugins.toString());
            assertThat(run.exitCode()).as(command).isNotZero();
            // doctor puts the key on a line of its own, the same words below it
            assertThat(run.out() + run.err()).as(command)
                    .contains("external-resource.rdma.param.coordination.file")
                    .contains(expected);
        }
    }

    private static void mkfifo(Path p) throws Exception {
        Process mkfifo = new ProcessBuilder("mkfifo", p.toString()).start();
        assertThat(mkfifo.waitFor(10, java.util.concurrent.TimeUnit.SECONDS) && mkfifo.exitValue() == 0)
                .as("mkfifo " + p).isTrue();
    }
}
