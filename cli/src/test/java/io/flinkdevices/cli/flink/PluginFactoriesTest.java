package io.flinkdevices.cli.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.testdriver.TestDriverFactory;
import io.flinkdevices.testkit.plugin.PluginFolder;

import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

class PluginFactoriesTest {

    private static final String FACTORY = TestDriverFactory.class.getName();

    @TempDir Path plugins;

    private void testDriverPlugin(String name) throws Exception {
        PluginFolder.builder(name)
                .includePackageOf(TestDriverFactory.class)
                .factory(TestDriverFactory.class)
                .buildInto(plugins);
    }

    @Test
    @DisplayName(
            "finds a factory by class name in its plugin's own class loader, as a TaskManager does")
    void loadsThroughPluginClassLoader() throws Exception {
        testDriverPlugin("test-driver");

        PluginFactories found = PluginFactories.load(plugins, new Configuration());

        assertThat(found.pluginIds()).containsExactly("test-driver");
        assertThat(found.problems()).isEmpty();
        ExternalResourceDriverFactory factory = found.find(FACTORY).orElseThrow();
        assertThat(factory.getClass().getClassLoader())
                .isNotSameAs(TestDriverFactory.class.getClassLoader());
        assertThat(found.find("com.x.Other")).isEmpty();
    }

    @Test
    @DisplayName(
            "reports a plugin whose service file names a missing class, and still loads the others")
    void brokenServiceEntry() throws Exception {
        testDriverPlugin("good");
        PluginFolder.builder("broken").factory("com.vendor.MissingFactory").buildInto(plugins);

        PluginFactories found = PluginFactories.load(plugins, new Configuration());

        assertThat(found.find(FACTORY)).isPresent();
        assertThat(found.problems())
                .singleElement()
                .asString()
                .startsWith(
                        "a plugin's factory cannot be loaded, and a TaskManager would not start:")
                .contains("com.vendor.MissingFactory");
        assertThat(found.describeMissing("com.vendor.MissingFactory"))
                .contains("(found: " + FACTORY + ")")
                .contains("com.vendor.MissingFactory not found");
    }

    @Test
    @DisplayName("reports a plugin folder without jars, on which Flink fails the TaskManager start")
    void folderWithoutJars() throws Exception {
        Files.createDirectories(plugins.resolve("empty"));

        PluginFactories found = PluginFactories.load(plugins, new Configuration());

        assertThat(found.problems())
                .singleElement()
                .asString()
                .contains("cannot be read, and a TaskManager would not start")
                .contains("Cannot find any jar files for plugin in directory");
    }

    @Test
    @DisplayName("says that the plugins directory is missing when a factory is looked for")
    void missingDirectory() {
        Path missing = plugins.resolve("nope");

        PluginFactories found = PluginFactories.load(missing, new Configuration());

        assertThat(found.problems()).isEmpty();
        assertThat(found.pluginsDirExists()).isFalse();
        assertThat(found.describeMissing("com.x.F"))
                .isEqualTo(
                        "factory com.x.F not found in any plugin under "
                                + missing
                                + ": that directory does not exist (set --plugins-dir or"
                                + " FLINK_PLUGINS_DIR)");
    }

    @Test
    @DisplayName("a class that a plugin holds but that is not a factory is named as such, not as missing")
    void classThatIsNotAFactory() throws Exception {
        testDriverPlugin("test");
        PluginFactories found = PluginFactories.load(plugins, new Configuration());
        String notAFactory = io.flinkdevices.cli.testdriver.TestDriverFactory.class.getName() + "$Driver";

        assertThat(found.describeMissing(notAFactory))
                .startsWith("class " + notAFactory + " is in plugin 'test' (")
                .contains("but is not an ExternalResourceDriverFactory")
                .contains("expected a class implementing org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory")
                .doesNotContain("not found in any plugin");
    }

    @Test
    @DisplayName("a factory name with a trailing space is named as such, not as a class the services file does not list")
    void trailingSpace() throws Exception {
        testDriverPlugin("test");
        PluginFactories found = PluginFactories.load(plugins, new Configuration());

        assertThat(found.find(FACTORY + " ")).as("Flink keeps the space and finds nothing").isEmpty();
        assertThat(found.describeMissing(FACTORY + " "))
                .contains("the name has a trailing space ('" + FACTORY + " ')")
                .contains("the factory " + FACTORY + " is in a plugin and listed by its services file")
                .endsWith("remove the trailing blanks")
                .doesNotContain("does not list it");
        assertThat(found.describeMissing("\t" + FACTORY + "  ")).contains("has a leading tab and 2 trailing spaces");
    }
}
