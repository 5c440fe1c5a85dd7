package io.flinkdevices.sdk.coordination;

import io.flinkdevices.sdk.config.DriverConfigException;
import io.flinkdevices.sdk.config.DriverParams;

import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

/** The shared coordination parameters as a driver factory reads them. */
class CoordinationParamsTest {

    @TempDir Path dir;

    static DriverParams params(Map<String, String> values) {
        Configuration config = new Configuration();
        values.forEach(config::setString);
        return DriverParams.of(config, "gpu");
    }

    @Test
    @DisplayName("defaults: disabled, a per-class file in the temp folder, 10 s, owner-only")
    void defaults() throws Exception {
        DriverParams p = params(Map.of());
        CoordinationParams c = CoordinationParams.read(p, "nvidia-gpu");
        p.validate();
        assertThat(c.enabled()).isFalse();
        assertThat(c.file())
                .isEqualTo(Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath()
                        .resolve("flink-devices-nvidia-gpu.coordination"));
        assertThat(c.lockTimeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(c.permissions()).isEqualTo(CoordinationParams.Permissions.OWNER);
        assertThat(p.knownKeys()).containsAll(CoordinationParams.KEYS);
    }

    @Test
    @DisplayName("reads every key as an operator writes it")
    void explicit() throws Exception {
        Path file = dir.resolve("gpus.coord");
        DriverParams p =
                params(
                        Map.of(
                                "coordination.enabled", "true",
                                "coordination.file", file.toString(),
                                "coordination.lock-timeout", "1500 ms",
                                "coordination.permissions", "group"));
        CoordinationParams c = CoordinationParams.read(p, "gpu");
        p.validate();
        assertThat(c.enabled()).isTrue();
        assertThat(c.file()).isEqualTo(file);
        assertThat(c.lockTimeout()).isEqualTo(Duration.ofMillis(1500));
        assertThat(c.permissions()).isEqualTo(CoordinationParams.Permissions.GROUP);
    }

    @Test
    @DisplayName("reports every bad value at once with its full key")
    void badValues() {
        DriverParams p =
                params(
                        Map.of(
                                "coordination.enabled", "yes",
                                "coordination.lock-timeout", "soon",
                                "coordination.permissions", "world",
                                "coordination.enable", "true"));
        CoordinationParams.read(p, "gpu");
        assertThatThrownBy(p::validate)
                .isInstanceOfSatisfying(
                        DriverConfigException.class,
                        e ->
                                assertThat(e.problems())
                                        .anySatisfy(m -> assertThat(m).startsWith("external-resource.gpu.param.coordination.enabled: expected true or false"))
                                        .anySatisfy(m -> assertThat(m).startsWith("external-resource.gpu.param.coordination.lock-timeout: expected a duration"))
                                        .anySatisfy(m -> assertThat(m).startsWith("external-resource.gpu.param.coordination.permissions: expected one of owner, group"))
                                        .anySatisfy(m -> assertThat(m).contains("coordination.enable: unknown parameter; did you mean external-resource.gpu.param.coordination.enabled?")));
    }

    @Test
    @DisplayName("when enabled, rejects a relative path, a missing folder and a symbolic link")
    void fileChecks() throws Exception {
        Path link = dir.resolve("link.coord");
        Files.createSymbolicLink(link, dir.resolve("elsewhere"));
        for (String[] c :
                new String[][] {
                    {"relative/gpu.coord", "expected an absolute path"},
                    {dir.resolve("missing/gpu.coord").toString(), "folder " + dir.resolve("missing") + " does not exist"},
                    {link.toString(), link + " is a symbolic link"},
                    {dir.toString(), "is a folder"}
                }) {
            DriverParams p = params(Map.of("coordination.enabled", "true", "coordination.file", c[0]));
            CoordinationParams.read(p, "gpu");
            assertThat(p.problems())
                    .singleElement()
                    .asString()
                    .startsWith("external-resource.gpu.param.coordination.file: ")
                    .contains(c[1]);
        }
    }

    @Test
    @DisplayName("when enabled, rejects a character device such as /dev/null, naming the full key and what is there (item 2)")
    void characterDevice() {
        Path devNull = Path.of("/dev/null");
        assumeThat(devNull).as("/dev/null (Linux, macOS)").exists();
        DriverParams p = params(Map.of("coordination.enabled", "true", "coordination.file", devNull.toString()));
        CoordinationParams.read(p, "gpu");
        assertThat(p.problems())
                .singleElement()
                .asString()
                .startsWith("external-resource.gpu.param.coordination.file: /dev/null is a character device; expected a regular file or no file");
    }

    @Test
    @DisplayName("does not check the file while coordination is disabled")
    void disabledNoChecks() {
        DriverParams p = params(Map.of("coordination.file", "relative"));
        CoordinationParams.read(p, "gpu");
        assertThat(p.problems()).isEmpty();
    }

    @Test
    @DisplayName("rejects a device class that cannot be part of a file name")
    void badDeviceClass() {
        assertThatThrownBy(() -> CoordinationParams.defaultFile("../etc"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'../etc'");
    }
}
