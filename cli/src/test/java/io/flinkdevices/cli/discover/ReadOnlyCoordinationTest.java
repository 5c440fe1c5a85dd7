package io.flinkdevices.cli.discover;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.doctor.Doctor;
import io.flinkdevices.cli.doctor.Finding;
import io.flinkdevices.cli.flink.PluginFactories;
import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@code discover} on a healthy host whose devices are all held by live TaskManagers: it reports
 * the devices (in use by pid N), not "no usable device", and never writes the live coordination
 * file.
 */
@ExtendWith(StopDeviceMonitors.class)
class ReadOnlyCoordinationTest {

    private static final String FACTORY = CoordinatedFactory.class.getName();

    @TempDir Path dir;
    private Process holder;

    @AfterEach
    void stopHolder() {
        if (holder != null) {
            holder.destroyForcibly();
        }
    }

    @Test
    @DisplayName("doctor's notes name the devices live TaskManagers hold, with their pids; none where coordination is off")
    void doctorNotesHeldDevices() throws Exception {
        holder = new ProcessBuilder("sleep", "60").start();
        Path file = dir.resolve("gpu.coordination");
        Files.writeString(file, "0 " + holder.pid() + "\n1 " + holder.pid() + "\n");
        Configuration config = new Configuration();
        config.setString("external-resources", "gpu");
        config.setString("external-resource.gpu.driver-factory.class", FACTORY);
        config.setString("external-resource.gpu.amount", "2");
        config.setString("external-resource.gpu.param.coordination.enabled", "true");
        config.setString("external-resource.gpu.param.coordination.file", file.toString());

        assertThat(io.flinkdevices.cli.flink.ReadOnlyCoordination.heldNotes(config))
                .containsExactly("external-resource.gpu: held by running TaskManagers of this host (coordination): 0 by pid "
                        + holder.pid() + ", 1 by pid " + holder.pid() + "; they are theirs until those processes end, not missing");
        config.setString("external-resource.gpu.param.coordination.enabled", "false");
        assertThat(io.flinkdevices.cli.flink.ReadOnlyCoordination.heldNotes(config)).isEmpty();
    }

    @Test
    @DisplayName("every device held by a live TaskManager: unavailable (the driver works, no device is free), each device 'in use by pid N', the file untouched")
    void allDevicesInUse() throws Exception {
        holder = new ProcessBuilder("sleep", "60").start();
        Path file = dir.resolve("gpu.coordination");
        String content = "0 " + holder.pid() + "\n1 " + holder.pid() + "\n";
        Files.writeString(file, content);
        Configuration config = new Configuration();
        config.setString("external-resources", "gpu");
        config.setString("external-resource.gpu.driver-factory.class", FACTORY);
        config.setString("external-resource.gpu.amount", "2");
        config.setString("external-resource.gpu.param.coordination.enabled", "true");
        config.setString("external-resource.gpu.param.coordination.file", file.toString());

        ResourceReport report =
                new Discovery(Duration.ofSeconds(30))
                        .run(config, PluginFactories.of(dir, Map.of(FACTORY, new CoordinatedFactory())))
                        .get(0);

        assertThat(report.problems())
                .containsExactly("external-resource.gpu.amount: cannot hand out 2 now: 0 of 2 devices free; 2 held: 0 by pid "
                        + holder.pid() + ", 1 by pid " + holder.pid());
        assertThat(report.status()).isEqualTo(ResourceStatus.UNAVAILABLE);
        assertThat(report.notes())
                .containsExactly(
                        "device 0 (0) is in use by pid " + holder.pid(),
                        "device 1 (1) is in use by pid " + holder.pid());
        assertThat(Files.readString(file)).isEqualTo(content);
        assertThat(dir.resolve("gpu.coordination.lock")).doesNotExist();
    }

    @Test
    @DisplayName("doctor on the same host: no finding (it probes the driver with coordination off), the file untouched")
    void doctorWithAllDevicesInUse() throws Exception {
        holder = new ProcessBuilder("sleep", "60").start();
        Path file = dir.resolve("gpu.coordination");
        String content = "0 " + holder.pid() + "\n1 " + holder.pid() + "\n";
        Files.writeString(file, content);
        Configuration config = new Configuration();
        config.setString("external-resources", "gpu");
        config.setString("external-resource.gpu.driver-factory.class", FACTORY);
        config.setString("external-resource.gpu.amount", "2");
        config.setString("external-resource.gpu.param.coordination.enabled", "true");
        config.setString("external-resource.gpu.param.coordination.file", file.toString());

        List<Finding> findings =
                new Doctor(Duration.ofSeconds(30), true, null)
                        .run(config, PluginFactories.of(dir, Map.of(FACTORY, new CoordinatedFactory())));

        assertThat(findings).isEmpty();
        assertThat(Files.readString(file)).isEqualTo(content);
        assertThat(dir.resolve("gpu.coordination.lock")).doesNotExist();
    }

    @Test
    @DisplayName("doctor judges the coordination params as a TaskManager's factory does: a missing folder is a"
            + " finding naming the folder to create, and the CLI creates nothing")
    void doctorChecksTheCoordinationFile() {
        Path file = dir.resolve("run/flink/gpu.coordination");
        Configuration config = new Configuration();
        config.setString("external-resources", "gpu");
        config.setString("external-resource.gpu.driver-factory.class", FACTORY);
        config.setString("external-resource.gpu.amount", "2");
        config.setString("external-resource.gpu.param.coordination.enabled", "true");
        config.setString("external-resource.gpu.param.coordination.file", file.toString());

        List<Finding> findings =
                new Doctor(Duration.ofSeconds(30), true, null)
                        .run(config, PluginFactories.of(dir, Map.of(FACTORY, new CoordinatedFactory())));

        assertThat(findings)
                .singleElement()
                .satisfies(
                        f -> {
                            assertThat(f.key()).isEqualTo("external-resource.gpu.param.coordination.file");
                            assertThat(f.problem())
                                    .startsWith("folder " + file.getParent() + " does not exist")
                                    .contains("Flink logs a WARN and drops resource 'gpu'");
                            assertThat(f.fix())
                                    .isEqualTo("create folder " + file.getParent() + " on every TaskManager host (mkdir -p "
                                            + file.getParent() + "), or set external-resource.gpu.param.coordination.file"
                                            + " to a file in a folder that exists there");
                        });
        assertThat(dir.resolve("run")).doesNotExist();
    }

    @Test
    @DisplayName("a FIFO planted at the coordination file does not hang discover, which reports the resource dropped as a TaskManager would drop it")
    void fifoAtTheFile() throws Exception {
        Path file = dir.resolve("gpu.coordination");
        Process mkfifo = new ProcessBuilder("mkfifo", file.toString()).start();
        assertThat(mkfifo.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(mkfifo.exitValue()).isZero();
        Configuration config = new Configuration();
        config.setString("external-resources", "gpu");
        config.setString("external-resource.gpu.driver-factory.class", FACTORY);
        config.setString("external-resource.gpu.amount", "2");
        config.setString("external-resource.gpu.param.coordination.enabled", "true");
        config.setString("external-resource.gpu.param.coordination.file", file.toString());

        ResourceReport report =
                new Discovery(Duration.ofSeconds(30))
                        .run(config, PluginFactories.of(dir, Map.of(FACTORY, new CoordinatedFactory())))
                        .get(0);

        assertThat(report.status()).isEqualTo(ResourceStatus.ERROR);
        assertThat(String.join("\n", report.problems()))
                .contains("external-resource.gpu.param.coordination.file")
                .contains(file.toString());
    }

    /** Two devices, "0" and "1", taken through the SDK's coordinator when coordination is on. */
    public static final class CoordinatedFactory implements ExternalResourceDriverFactory {
        @Override
        public ExternalResourceDriver createExternalResourceDriver(Configuration config) throws Exception {
            DriverParams params = DriverParams.of(config, "gpu");
            CoordinationParams coordination = CoordinationParams.read(params, "test-gpu");
            params.validate();
            DeviceCoordinator coordinator = coordination.enabled() ? DeviceCoordinator.create(coordination) : null;
            return amount -> {
                List<String> ids = coordinator == null
                        ? List.of("0", "1").subList(0, (int) amount)
                        : coordinator.allocate(List.of("0", "1"), amount);
                Set<ExternalResourceInfo> infos = new LinkedHashSet<>();
                ids.forEach(id -> infos.add(new Info(id)));
                return infos;
            };
        }
    }

    private static final class Info implements ExternalResourceInfo {
        private final String index;

        Info(String index) {
            this.index = index;
        }

        @Override
        public Optional<String> getProperty(String key) {
            return "index".equals(key) ? Optional.of(index) : Optional.empty();
        }

        @Override
        public Collection<String> getKeys() {
            return List.of("index");
        }
    }
}
