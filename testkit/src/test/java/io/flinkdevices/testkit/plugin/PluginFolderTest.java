package io.flinkdevices.testkit.plugin;

import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.plugin.fixture.OneGpuDriverFactory;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.core.plugin.PluginDescriptor;
import org.apache.flink.core.plugin.PluginLoader;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PluginFolderTest {

    @TempDir Path plugins;

    @Nested
    @DisplayName("the jar it writes")
    class TheJar {

        @Test
        @DisplayName("lies in plugins/<name>/<name>.jar and holds the package, the SDK and the service file")
        void layoutAndContent() throws IOException {
            Path jar =
                    PluginFolder.builder("one-gpu")
                            .includePackageOf(OneGpuDriverFactory.class)
                            .includeSdk()
                            .factory(OneGpuDriverFactory.class)
                            .buildInto(plugins);

            assertThat(jar).isEqualTo(plugins.resolve("one-gpu").resolve("one-gpu.jar"));
            List<String> names = entryNames(jar);
            assertThat(names)
                    .contains(
                            "META-INF/MANIFEST.MF",
                            "io/flinkdevices/testkit/plugin/fixture/OneGpuDriverFactory.class",
                            "io/flinkdevices/sdk/info/GpuInfo.class",
                            "io/flinkdevices/sdk/internal/InfoProperties.class",
                            PluginFolder.FACTORY_SERVICE_FILE)
                    .noneMatch(n -> n.startsWith("org/apache/flink/"))
                    .noneMatch(n -> n.startsWith("io/flinkdevices/testkit/plugin/PluginFolder"));
            assertThat(entry(jar, PluginFolder.FACTORY_SERVICE_FILE))
                    .isEqualTo(OneGpuDriverFactory.class.getName() + "\n");
        }

        @Test
        @DisplayName("is byte for byte the same when built twice")
        void reproducible(@TempDir Path otherRoot) throws IOException {
            PluginFolder.Builder builder =
                    PluginFolder.builder("one-gpu")
                            .includePackageOf(OneGpuDriverFactory.class)
                            .includeSdk()
                            .factory(OneGpuDriverFactory.class);
            Path first = builder.buildInto(plugins);
            Path second = builder.buildInto(otherRoot);
            assertThat(Files.readAllBytes(second)).isEqualTo(Files.readAllBytes(first));
        }

        @Test
        @DisplayName("takes a package from a jar on the class path as well as from a folder")
        void packageFromJar(@TempDir Path elsewhere) throws Exception {
            Path firstJar =
                    PluginFolder.builder("first")
                            .includePackageOf(OneGpuDriverFactory.class)
                            .buildInto(elsewhere);
            // Flink's plugin class loader takes the fixture from the jar, Flink from this class path
            try (URLClassLoader fromJar =
                    PluginLoader.createPluginClassLoader(
                            new PluginDescriptor(
                                    "first", new URL[] {firstJar.toUri().toURL()}, new String[0]),
                            getClass().getClassLoader(),
                            CoreOptions.getPluginParentFirstLoaderPatterns(new Configuration()))) {
                Class<?> loadedFromJar = fromJar.loadClass(OneGpuDriverFactory.class.getName());
                assertThat(loadedFromJar).isNotSameAs(OneGpuDriverFactory.class);
                Path rebuilt =
                        PluginFolder.builder("rebuilt")
                                .includePackageOf(loadedFromJar)
                                .buildInto(plugins);
                assertThat(entryNames(rebuilt))
                        .contains("io/flinkdevices/testkit/plugin/fixture/OneGpuDriverFactory.class");
            }
        }

        @Test
        @DisplayName("carries extra entries added by name")
        void addEntry() throws IOException {
            Path jar =
                    PluginFolder.builder("extra")
                            .addEntry("my/pkg/defaults.properties", "a=1".getBytes(StandardCharsets.UTF_8))
                            .buildInto(plugins);
            assertThat(entry(jar, "my/pkg/defaults.properties")).isEqualTo("a=1");
        }
    }

    @Nested
    @DisplayName("the folder it writes")
    class TheFolder {

        @Test
        @DisplayName("holds copied jars next to its own and replaces whatever was there before")
        void includeJarAndReplace(@TempDir Path elsewhere) throws IOException {
            Path stale = Files.createDirectories(plugins.resolve("drv")).resolve("stale.jar");
            Files.write(stale, new byte[] {1});
            Path shaded =
                    PluginFolder.builder("shaded")
                            .includePackageOf(OneGpuDriverFactory.class)
                            .buildInto(elsewhere);

            Path result = PluginFolder.builder("drv").includeJar(shaded).buildInto(plugins);

            assertThat(result).isEqualTo(plugins.resolve("drv").resolve("shaded.jar"));
            assertThat(result).hasSameBinaryContentAs(shaded);
            assertThat(stale).doesNotExist();
        }

        @Test
        @DisplayName("is refused when nothing was included")
        void empty() {
            assertThatThrownBy(() -> PluginFolder.builder("drv").buildInto(plugins))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("'drv' would be empty");
        }
    }

    @Nested
    @DisplayName("a wrong argument")
    class WrongArguments {

        @Test
        @DisplayName("a plugin name with a path in it is refused")
        void badName() {
            assertThatThrownBy(() -> PluginFolder.builder("../x"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("plain folder name")
                    .hasMessageContaining("../x");
        }

        @Test
        @DisplayName("a JDK class cannot anchor a package")
        void jdkClass() {
            assertThatThrownBy(() -> PluginFolder.builder("x").includePackageOf(String.class))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("java.lang.String");
        }

        @Test
        @DisplayName("two different files under one name are refused, naming both sources")
        void clash() {
            PluginFolder.Builder b =
                    PluginFolder.builder("x").addEntry("a/b.txt", new byte[] {1});
            assertThatThrownBy(() -> b.addEntry("a/b.txt", new byte[] {2}))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("two different files named a/b.txt");
        }

        @Test
        @DisplayName("a file that is not a jar is refused by includeJar")
        void notAJar() throws IOException {
            Path txt = Files.writeString(plugins.resolve("x.txt"), "x");
            assertThatThrownBy(() -> PluginFolder.builder("x").includeJar(txt))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(".jar");
        }
    }

    @Test
    @DisplayName("the SDK it bundles is the SDK on this class path")
    void sdkFromClassPath() throws IOException {
        Path jar = PluginFolder.builder("sdk").includeSdk().buildInto(plugins);
        try (JarFile jf = new JarFile(jar.toFile())) {
            assertThat(jf.getInputStream(jf.getEntry("io/flinkdevices/sdk/info/GpuInfo.class")).readAllBytes())
                    .isEqualTo(
                            GpuInfo.class
                                    .getResourceAsStream("GpuInfo.class")
                                    .readAllBytes());
        }
    }

    static List<String> entryNames(Path jar) throws IOException {
        try (JarFile jf = new JarFile(jar.toFile())) {
            List<String> names = new ArrayList<>();
            for (JarEntry e : Collections.list(jf.entries())) {
                names.add(e.getName());
            }
            return names;
        }
    }

    static String entry(Path jar, String name) throws IOException {
        try (JarFile jf = new JarFile(jar.toFile())) {
            JarEntry e = jf.getJarEntry(name);
            assertThat(e).as("entry %s in %s", name, jar).isNotNull();
            return new String(jf.getInputStream(e).readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
