package io.flinkdevices.rdma;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.testkit.plugin.PluginCheck;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarFile;
import java.util.stream.Collectors;

/** The shaded plugin jar, as built by {@code package}, is what Flink's plugin loader needs. */
@DisplayName("The RDMA plugin jar")
class RdmaPluginJarITCase {

    static Path pluginJar() {
        String path = System.getProperty("rdma.plugin.jar");
        assertThat(path).as("system property rdma.plugin.jar (set by the pom)").isNotBlank();
        Path jar = Path.of(path);
        assertThat(jar).as("run 'package' first").isRegularFile();
        return jar;
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
        List<String> entries;
        try (JarFile jar = new JarFile(pluginJar().toFile())) {
            entries = jar.stream().map(e -> e.getName()).collect(Collectors.toList());
        }
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
