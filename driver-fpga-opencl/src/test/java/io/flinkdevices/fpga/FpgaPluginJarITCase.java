package io.flinkdevices.fpga;

import io.flinkdevices.testkit.plugin.PluginCheck;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The shaded plugin jar, as attached by {@code package} with classifier {@code plugin}. */
@DisplayName("The FPGA plugin jar")
class FpgaPluginJarITCase {

    static Path pluginJar() {
        return PluginCheck.builtJar("fpga.plugin.jar");
    }

    @Test
    @DisplayName("loads through Flink's PluginLoader and names the factory once")
    void passesPluginCheck() {
        PluginCheck.Result result = PluginCheck.check(pluginJar());

        assertThat(result.factoryClassName()).isEqualTo(OpenClFpgaDriverFactory.class.getName());
    }

    @Test
    @DisplayName("bundles sdk-api and JOCL with its linux-x86_64 library only, never Flink or slf4j")
    void isSelfContained() throws Exception {
        List<String> entries = PluginCheck.entries(pluginJar());
        assertThat(pluginJar().getFileName().toString()).isEqualTo("driver-fpga-opencl-0.1.0-SNAPSHOT-plugin.jar");
        assertThat(entries)
                .contains(
                        "io/flinkdevices/fpga/OpenClFpgaDriverFactory.class",
                        "io/flinkdevices/sdk/nativelib/PrivateNativeLibraries.class",
                        "org/jocl/CL.class",
                        "lib/libJOCL_2_0_6-linux-x86_64.so",
                        "META-INF/services/org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory");
        assertThat(entries)
                .noneMatch(e -> e.startsWith("org/apache/flink/"))
                .noneMatch(e -> e.startsWith("org/slf4j/"))
                .noneMatch(e -> e.startsWith("lib/") && !e.equals("lib/") && !e.endsWith("linux-x86_64.so"));
        assertThat(Files.size(pluginJar())).as("jar size in bytes").isLessThan(1L << 20);
    }
}
