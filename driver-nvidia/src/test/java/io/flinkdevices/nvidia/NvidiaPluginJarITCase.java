package io.flinkdevices.nvidia;

import io.flinkdevices.testkit.plugin.PluginCheck;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The shaded plugin jar, as built by {@code package}, is what Flink's plugin loader needs. */
@DisplayName("The NVIDIA plugin jar")
class NvidiaPluginJarITCase {

    static Path pluginJar() {
        return PluginCheck.builtJar("nvidia.plugin.jar");
    }

    @Test
    @DisplayName("loads through Flink's PluginLoader and names the factory once")
    void passesPluginCheck() {
        PluginCheck.Result result = PluginCheck.check(pluginJar());

        assertThat(result.factoryClassName()).isEqualTo(NvidiaGpuDriverFactory.class.getName());
    }

    @Test
    @DisplayName("bundles sdk-api and JCuda's driver API, never Flink or slf4j")
    void isSelfContained() throws Exception {
        List<String> entries = PluginCheck.entries(pluginJar());
        assertThat(entries)
                .contains(
                        "io/flinkdevices/nvidia/NvidiaGpuDriverFactory.class",
                        "io/flinkdevices/sdk/process/ExternalCommand.class",
                        "jcuda/driver/JCudaDriver.class",
                        "lib/libJCudaDriver-12.6.0-linux-x86_64.so",
                        "META-INF/services/org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory");
        assertThat(entries)
                .noneMatch(e -> e.startsWith("org/apache/flink/"))
                .noneMatch(e -> e.startsWith("org/slf4j/"))
                .noneMatch(e -> e.startsWith("lib/libJNvPTXCompiler"));
        assertThat(Files.size(pluginJar())).as("jar size in bytes").isLessThan(3L << 20);
    }
}
