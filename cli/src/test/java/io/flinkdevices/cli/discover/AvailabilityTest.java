package io.flinkdevices.cli.discover;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.CliRun;
import io.flinkdevices.cli.TestPlugins;
import io.flinkdevices.cli.flink.PluginFactories;
import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceQuarantine;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

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
 * {@code discover} says whether this host can serve each resource now: how many devices are free,
 * held (by which process), quarantined and failed, and a status and exit code that are not ok when
 * a TaskManager starting now would not get its amount.
 */
@ExtendWith(StopDeviceMonitors.class)
class AvailabilityTest {

    private static final String COORDINATED = ReadOnlyCoordinationTest.CoordinatedFactory.class.getName();

    @TempDir Path dir;
    private Process holder;

    @AfterEach
    void stopHolder() {
        if (holder != null) {
            holder.destroyForcibly();
        }
    }

    private Configuration coordinated(Path file, long amount) {
        Configuration config = new Configuration();
        config.setString("external-resources", "gpu");
        config.setString("external-resource.gpu.driver-factory.class", COORDINATED);
        config.setString("external-resource.gpu.amount", Long.toString(amount));
        config.setString("external-resource.gpu.param.coordination.enabled", "true");
        config.setString("external-resource.gpu.param.coordination.file", file.toString());
        return config;
    }

    private ResourceReport discover(Configuration config, ExternalResourceDriverFactory factory) {
        return new Discovery(Duration.ofSeconds(30))
                .run(config, PluginFactories.of(dir, Map.of(config.getString("external-resource.gpu.driver-factory.class", ""), factory)))
                .get(0);
    }

    /** Quarantines {@code id} in {@code file} through the SDK, as a TaskManager's monitor does. */
    private static void quarantine(Path file, String id, String reason) throws Exception {
        Configuration params = new Configuration();
        params.setString("coordination.enabled", "true");
        params.setString("coordination.file", file.toString());
        DriverParams driverParams = DriverParams.of(params, "gpu");
        CoordinationParams coordination = CoordinationParams.read(driverParams, "test-gpu");
        driverParams.validate();
        assertThat(DeviceQuarantine.create(coordination).add(id, reason)).isTrue();
    }

    @Test
    @DisplayName("the only free device quarantined, the other held by a TaskManager: unavailable, naming both, the files untouched")
    void quarantinedAndHeld() throws Exception {
        holder = new ProcessBuilder("sleep", "60").start();
        Path file = dir.resolve("gpu.coordination");
        quarantine(file, "1", "uncorrected ECC errors");
        Files.writeString(file, Files.readString(file) + "0 " + holder.pid() + "\n");
        String content = Files.readString(file);

        ResourceReport report = discover(coordinated(file, 1), new ReadOnlyCoordinationTest.CoordinatedFactory());

        assertThat(report.status()).isEqualTo(ResourceStatus.UNAVAILABLE);
        assertThat(report.availability().servable()).isFalse();
        assertThat(report.availability().free()).isZero();
        assertThat(report.availability().held()).containsExactly("0 by pid " + holder.pid());
        assertThat(report.availability().quarantined()).containsExactly("1 (uncorrected ECC errors)");
        assertThat(report.error())
                .isEqualTo("external-resource.gpu.amount: cannot hand out 1 now: 0 of 2 devices free; 1 held: 0 by pid "
                        + holder.pid() + "; 1 quarantined: 1 (uncorrected ECC errors)");
        assertThat(report.infos()).as("what the amount's devices are, unchanged").hasSize(1);
        assertThat(Files.readString(file)).isEqualTo(content);
    }

    @Test
    @DisplayName("the first device held, the second free: ok, since a TaskManager starting now takes the second")
    void heldButAnotherIsFree() throws Exception {
        holder = new ProcessBuilder("sleep", "60").start();
        Path file = dir.resolve("gpu.coordination");
        Files.writeString(file, "0 " + holder.pid() + "\n");

        ResourceReport report = discover(coordinated(file, 1), new ReadOnlyCoordinationTest.CoordinatedFactory());

        assertThat(report.status()).as(report.error()).isEqualTo(ResourceStatus.OK);
        assertThat(report.availability().summary())
                .isEqualTo("can hand out 1 now: 1 of 2 devices free; 1 held: 0 by pid " + holder.pid());
    }

    @Test
    @DisplayName("a dead holder's record does not count: its device is free, as the next TaskManager reclaims it")
    void deadHolderIsFree() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        Path file = dir.resolve("gpu.coordination");
        Files.writeString(file, "0 " + gone.pid() + "\n1 " + gone.pid() + "\n");

        ResourceReport report = discover(coordinated(file, 2), new ReadOnlyCoordinationTest.CoordinatedFactory());

        assertThat(report.status()).as(report.error()).isEqualTo(ResourceStatus.OK);
        assertThat(report.availability().free()).isEqualTo(2);
    }

    @Test
    @DisplayName("a device whose first health sample reads failed is counted failed with its reason; without coordination nothing else is asked")
    void failedHealth() {
        Configuration config = new Configuration();
        config.setString("external-resources", "gpu");
        config.setString("external-resource.gpu.driver-factory.class", HealthFactory.class.getName());
        config.setString("external-resource.gpu.amount", "2");

        ResourceReport report = discover(config, new HealthFactory());

        assertThat(report.status()).isEqualTo(ResourceStatus.UNAVAILABLE);
        assertThat(report.availability().failed()).containsExactly("GPU-1 (GPU-1 is no longer listed by nvidia-smi)");
        assertThat(report.availability().free()).isEqualTo(1);
        assertThat(report.infos()).as("live keys stay out of the device table")
                .allSatisfy(info -> assertThat(info).doesNotContainKey("health"));
    }

    @Test
    @DisplayName("the CLI: exit code 4 and status 'unavailable' in the table and in --json, with the counts")
    void exitCodeAndJson() throws Exception {
        holder = new ProcessBuilder("sleep", "60").start();
        Path home = Files.createDirectories(dir.resolve("flink"));
        Path conf = Files.createDirectories(home.resolve("conf"));
        TestPlugins.testPlugin(Files.createDirectories(home.resolve("plugins")), "test");
        Path file = dir.resolve("test.coordination");
        Files.writeString(file, "0 " + holder.pid() + "\n1 " + holder.pid() + "\n");
        Files.writeString(conf.resolve("config.yaml"), String.join("\n",
                "external-resources: gpu",
                "external-resource.gpu.driver-factory.class: " + TestPlugins.TEST,
                "external-resource.gpu.amount: 2",
                "external-resource.gpu.param.devices: 3",
                "external-resource.gpu.param.coordination.enabled: true",
                "external-resource.gpu.param.coordination.file: " + file,
                ""));

        CliRun table = CliRun.run("discover", "--conf-dir", conf.toString());
        assertThat(table.exitCode()).as(table.out() + table.err()).isEqualTo(4);
        assertThat(table.out())
                .contains("gpu       unavailable  2")
                .contains("  cannot hand out 2 now: 1 of 3 devices free; 2 held: 0 by pid " + holder.pid() + ", 1 by pid " + holder.pid())
                .contains("0 of 1 resources ok.");

        CliRun json = CliRun.run("discover", "--conf-dir", conf.toString(), "--json");
        assertThat(json.exitCode()).isEqualTo(4);
        JsonNode gpu = new ObjectMapper().readTree(json.out()).get("resources").get(0);
        assertThat(gpu.get("status").asText()).isEqualTo("unavailable");
        JsonNode availability = gpu.get("availability");
        assertThat(availability.get("servable").asBoolean()).isFalse();
        assertThat(availability.get("free").asInt()).isEqualTo(1);
        assertThat(availability.get("devices").asInt()).as("the driver was asked for more until it had no more").isEqualTo(3);
        assertThat(availability.get("held")).hasSize(2);

        holder.destroyForcibly().waitFor();
        CliRun free = CliRun.run("discover", "--conf-dir", conf.toString());
        assertThat(free.exitCode()).as(free.out() + free.err()).isZero();
        assertThat(free.out()).contains("can hand out 2 now: 2 of 2 devices free").contains("All 1 resources ok.");
        assertThat(Files.readString(file)).as("the records of the ended holder stay for the next TaskManager to reclaim")
                .contains("0 " + holder.pid());
    }

    /** Two GPUs whose monitor already read GPU-0 ok and GPU-1 failed. */
    public static final class HealthFactory implements ExternalResourceDriverFactory {
        @Override
        public ExternalResourceDriver createExternalResourceDriver(Configuration config) {
            return amount -> {
                Set<ExternalResourceInfo> infos = new LinkedHashSet<>();
                for (int i = 0; i < amount; i++) {
                    infos.add(new LiveInfo(i, i == 1));
                }
                return infos;
            };
        }
    }

    private static final class LiveInfo implements ExternalResourceInfo {
        private final Map<String, String> keys;

        LiveInfo(int index, boolean failed) {
            String uuid = "GPU-" + index;
            keys = failed
                    ? Map.of("index", Integer.toString(index), "uuid", uuid, "health.device", uuid, "health", "failed",
                            "health.reason", uuid + " is no longer listed by nvidia-smi")
                    : Map.of("index", Integer.toString(index), "uuid", uuid, "health.device", uuid, "health", "ok");
        }

        @Override
        public Optional<String> getProperty(String key) {
            return Optional.ofNullable(keys.get(key));
        }

        @Override
        public Collection<String> getKeys() {
            return List.copyOf(keys.keySet());
        }
    }
}
