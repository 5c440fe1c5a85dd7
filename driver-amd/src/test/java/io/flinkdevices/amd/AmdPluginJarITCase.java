package io.flinkdevices.amd;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.testkit.plugin.PluginCheck;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The shaded plugin jar, as built by {@code package}, is what Flink's plugin loader needs. */
@DisplayName("The AMD plugin jar")
class AmdPluginJarITCase {

    static Path pluginJar() {
        return PluginCheck.builtJar("amd.plugin.jar");
    }

    @Test
    @DisplayName("loads through Flink's PluginLoader and names the factory once")
    void passesPluginCheck() {
        PluginCheck.Result result = PluginCheck.check(pluginJar());

        assertThat(result.factoryClassName()).isEqualTo(AmdGpuDriverFactory.class.getName());
    }

    @Test
    @DisplayName("bundles sdk-api (whose reader parses amd-smi's JSON), never Jackson, Flink or slf4j")
    void isSelfContained() throws Exception {
        List<String> entries = PluginCheck.entries(pluginJar());
        assertThat(entries)
                .contains(
                        "io/flinkdevices/amd/AmdGpuDriverFactory.class",
                        "io/flinkdevices/sdk/host/Sysfs.class",
                        "io/flinkdevices/sdk/host/ToolOutput.class",
                        "META-INF/services/org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory");
        assertThat(entries)
                .noneMatch(e -> e.startsWith("org/apache/flink/"))
                .noneMatch(e -> e.startsWith("org/slf4j/"))
                .noneMatch(e -> e.startsWith("com/fasterxml/"))
                .noneMatch(e -> e.startsWith("io/flinkdevices/amd/shaded/"));
        assertThat(Files.size(pluginJar())).as("jar size in bytes").isLessThan(1L << 20);
    }
}
