package io.flinkdevices.testkit.plugin;

import io.flinkdevices.testkit.plugin.fixture.HiddenConstructorDriverFactory;
import io.flinkdevices.testkit.plugin.fixture.LibraryUsingDriverFactory;
import io.flinkdevices.testkit.plugin.fixture.OneGpuDriverFactory;
import io.flinkdevices.testkit.plugin.fixture.SecondDriverFactory;

import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PluginCheckTest {

    @TempDir Path plugins;

    private PluginFolder.Builder good(String name) {
        return PluginFolder.builder(name)
                .includePackageOf(OneGpuDriverFactory.class)
                .includeSdk()
                .factory(OneGpuDriverFactory.class);
    }

    @Nested
    @DisplayName("a well-formed plugin")
    class WellFormed {

        @Test
        @DisplayName("passes as a jar and reports its factory, id and jars")
        void jar() throws IOException {
            Path jar = good("one-gpu").buildInto(plugins);

            PluginCheck.Result result = PluginCheck.check(jar);

            assertThat(result.factoryClassName()).isEqualTo(OneGpuDriverFactory.class.getName());
            assertThat(result.pluginId()).isEqualTo("one-gpu");
            assertThat(result.jars()).containsExactly(jar.toAbsolutePath().normalize());
            assertThat(result.classCount()).isGreaterThan(3);
            assertThat(PluginCheck.problems(jar)).isEmpty();
        }

        @Test
        @DisplayName("passes as a folder whose factory and SDK come in separate jars")
        void folderOfTwoJars(@TempDir Path elsewhere) throws IOException {
            Path sdkJar = PluginFolder.builder("sdk").includeSdk().buildInto(elsewhere);
            PluginFolder.builder("split")
                    .includePackageOf(OneGpuDriverFactory.class)
                    .factory(OneGpuDriverFactory.class)
                    .includeJar(sdkJar)
                    .buildInto(plugins);

            PluginCheck.Result result = PluginCheck.check(plugins.resolve("split"));

            assertThat(result.jars()).hasSize(2);
            assertThat(result.factoryClassName()).isEqualTo(OneGpuDriverFactory.class.getName());
        }
    }

    @Nested
    @DisplayName("a broken plugin fails with a message saying what to change")
    class Broken {

        @Test
        @DisplayName("when it registers two factories")
        void twoFactories() throws IOException {
            Path jar = good("two").factory(SecondDriverFactory.class).buildInto(plugins);

            assertThatThrownBy(() -> PluginCheck.check(jar))
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("expected exactly one factory")
                    .hasMessageContaining("found 2")
                    .hasMessageContaining(SecondDriverFactory.class.getName());
        }

        @Test
        @DisplayName("when it registers no factory")
        void noFactory() throws IOException {
            Path jar =
                    PluginFolder.builder("none")
                            .includePackageOf(OneGpuDriverFactory.class)
                            .includeSdk()
                            .buildInto(plugins);

            assertThat(PluginCheck.problems(jar))
                    .anySatisfy(p -> assertThat(p).contains("found 0").contains(".factory("));
        }

        @Test
        @DisplayName("when it bundles a Flink class")
        void bundlesFlink() throws IOException {
            Path jar =
                    good("flink")
                            .addEntry(
                                    "org/apache/flink/configuration/Configuration.class",
                                    classBytes(Configuration.class))
                            .buildInto(plugins);

            assertThatThrownBy(() -> PluginCheck.check(jar))
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("1 problem")
                    .hasMessageContaining("under org/apache/flink/ (Apache Flink)")
                    .hasMessageContaining("org/apache/flink/configuration/Configuration.class")
                    .hasMessageContaining("provided scope");
        }

        @Test
        @DisplayName("when it bundles an SLF4J class")
        void bundlesSlf4j() throws IOException {
            Path jar =
                    good("slf4j")
                            .addEntry("org/slf4j/Logger.class", classBytes(Logger.class))
                            .buildInto(plugins);

            assertThatThrownBy(() -> PluginCheck.check(jar))
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("under org/slf4j/ (SLF4J)")
                    .hasMessageContaining("org/slf4j/Logger.class");
        }

        @Test
        @DisplayName("when it forgets to bundle the SDK its driver uses")
        void noSdk() throws IOException {
            Path jar =
                    PluginFolder.builder("no-sdk")
                            .includePackageOf(OneGpuDriverFactory.class)
                            .factory(OneGpuDriverFactory.class)
                            .buildInto(plugins);

            assertThatThrownBy(() -> PluginCheck.check(jar))
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("io.flinkdevices.sdk.config.DriverParams")
                    .hasMessageContaining("used by " + OneGpuDriverFactory.class.getName())
                    .hasMessageContaining(".includeSdk()");
        }

        @Test
        @DisplayName("when the driver uses a library the jar does not bundle, saying how to bundle it")
        void unbundledLibrary() throws IOException {
            Path jar =
                    PluginFolder.builder("no-library")
                            .includePackageOf(LibraryUsingDriverFactory.class)
                            .includeSdk()
                            .factory(LibraryUsingDriverFactory.class)
                            .buildInto(plugins);

            assertThatThrownBy(() -> PluginCheck.check(jar))
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("org.assertj.core.api.Assertions")
                    .hasMessageContaining("<artifactSet><includes>")
                    .hasMessageContaining("<relocation>")
                    .hasMessageContaining("module-info.class")
                    .hasMessageContaining("META-INF/versions")
                    .hasMessageContaining(".includeJar(");
        }

        @Test
        @DisplayName("when the factory cannot be instantiated")
        void notInstantiable() throws IOException {
            Path jar =
                    PluginFolder.builder("hidden")
                            .includePackageOf(HiddenConstructorDriverFactory.class)
                            .includeSdk()
                            .factory(HiddenConstructorDriverFactory.class)
                            .buildInto(plugins);

            assertThatThrownBy(() -> PluginCheck.check(jar))
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("could not load a factory")
                    .hasMessageContaining(HiddenConstructorDriverFactory.class.getName())
                    .hasMessageContaining("public no-arg constructor");
        }

        @Test
        @DisplayName("when the factory named in the service file is not in the jar")
        void factoryMissing() throws IOException {
            Path jar = PluginFolder.builder("ghost").includeSdk().factory("com.example.Ghost").buildInto(plugins);

            assertThatThrownBy(() -> PluginCheck.check(jar))
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("com.example.Ghost");
        }

        @Test
        @DisplayName("when given the plugins root instead of one plugin folder")
        void pluginsRoot() throws IOException {
            good("one-gpu").buildInto(plugins);

            assertThat(PluginCheck.problems(plugins))
                    .singleElement()
                    .satisfies(p -> assertThat(p).contains("not the plugins root"));
        }

        @Test
        @DisplayName("when the path does not exist")
        void missing() {
            assertThat(PluginCheck.problems(plugins.resolve("nope.jar")))
                    .singleElement()
                    .satisfies(p -> assertThat(p).contains("no such jar or plugin folder"));
        }

        @Test
        @DisplayName("and lists every problem at once")
        void everyProblem() throws IOException {
            Path jar =
                    good("many")
                            .factory(SecondDriverFactory.class)
                            .addEntry("org/slf4j/Logger.class", classBytes(Logger.class))
                            .buildInto(plugins);

            assertThat(PluginCheck.problems(jar)).hasSize(2);
            assertThatThrownBy(() -> PluginCheck.check(jar)).hasMessageContaining("(2 problems)");
        }
    }

    private static byte[] classBytes(Class<?> type) throws IOException {
        String resource = type.getName().replace('.', '/') + ".class";
        try (InputStream in = type.getClassLoader().getResourceAsStream(resource)) {
            assertThat(in).as(resource).isNotNull();
            return in.readAllBytes();
        }
    }

    @Test
    @DisplayName("a plain file that is not a jar is reported, not thrown")
    void notAJar() throws IOException {
        Path file = Files.writeString(plugins.resolve("x.jar"), "not a zip");
        assertThat(PluginCheck.problems(file))
                .singleElement()
                .satisfies(p -> assertThat(p).contains("cannot read").contains("as a jar"));
    }
}
