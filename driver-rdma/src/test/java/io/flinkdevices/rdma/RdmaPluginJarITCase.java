package io.flinkdevices.rdma;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.testkit.plugin.PluginCheck;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The shaded plugin jar, as built by {@code package}, is what Flink's plugin loader needs. */
@DisplayName("The RDMA plugin jar")
class RdmaPluginJarITCase {

    static Path pluginJar() {
        return PluginCheck.builtJar("rdma.plugin.jar");
    }

    @Test
    @DisplayName("loads through Flink's PluginLoader and names the factory once")
    void passesPluginCheck() {
        PluginCheck.Result result = PluginCheck.check(pluginJar());

        assertThat(result.factoryClassName()).isEqualTo(RdmaDriverFactory.class.getName());
    }

    @Test
    @DisplayName("bundles sdk-api, never Flink, slf4j or Jackson")
    void isSelfContained() throws Exception {
        List<String> entries = PluginCheck.entries(pluginJar());
        assertThat(entries)
                .contains(
                        "io/flinkdevices/rdma/RdmaDriverFactory.class",
                        "io/flinkdevices/sdk/host/Sysfs.class",

                        "META-INF/services/org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory");
        assertThat(entries)
                .noneMatch(e -> e.startsWith("org/apache/flink/"))
                .noneMatch(e -> e.startsWith("org/slf4j/"))
                .noneMatch(e -> e.startsWith("com/fasterxml/"));
        assertThat(Files.size(pluginJar())).as("jar size in bytes").isLessThan(1L << 20);
    }
}
