package io.flinkdevices.cli;

import io.flinkdevices.cli.testdeploy.DeployTestDriverFactory;
import io.flinkdevices.cli.testdriver.TestDriverFactory;
import io.flinkdevices.testkit.plugin.PluginFolder;

import java.io.IOException;
import java.nio.file.Path;

/** Plugin folders holding this module's test drivers, each with its own class loader. */
public final class TestPlugins {

    /** The factory of the driver whose Kubernetes and Yarn needs are params. */
    public static final String DEPLOY = DeployTestDriverFactory.class.getName();

    /** The factory of the driver without decorators whose failures are params. */
    public static final String TEST = TestDriverFactory.class.getName();

    private TestPlugins() {}

    /** {@code plugins/<folder>/} with the deploy test driver and its own copy of sdk-api. */
    public static Path deployPlugin(Path plugins, String folder) throws IOException {
        return PluginFolder.builder(folder)
                .includePackageOf(DeployTestDriverFactory.class)
                .includeSdk()
                .factory(DeployTestDriverFactory.class)
                .buildInto(plugins);
    }

    /** {@code plugins/<folder>/} with the test driver without decorators. */
    public static Path testPlugin(Path plugins, String folder) throws IOException {
        return PluginFolder.builder(folder)
                .includePackageOf(TestDriverFactory.class)
                .factory(TestDriverFactory.class)
                .buildInto(plugins);
    }
}
