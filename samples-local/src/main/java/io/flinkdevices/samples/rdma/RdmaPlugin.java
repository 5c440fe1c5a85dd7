package io.flinkdevices.samples.rdma;

import io.flinkdevices.rdma.RdmaDriverFactory;
import io.flinkdevices.testkit.plugin.PluginFolder;

import java.io.IOException;
import java.nio.file.Path;

/** Writes {@code plugins/rdma/} from the class path: flink-devices' RDMA driver and the SDK. */
public final class RdmaPlugin {

    /** The driver's factory, as configured in {@code external-resource.<name>.driver-factory.class}. */
    public static final String FACTORY = RdmaDriverFactory.class.getName();

    private RdmaPlugin() {}

    /** Builds the plugin folder under {@code pluginsRoot}; returns its jar. */
    public static Path install(Path pluginsRoot) throws IOException {
        return PluginFolder.builder("rdma")
                .includePackageOf(RdmaDriverFactory.class)
                .includeSdk()
                .factory(RdmaDriverFactory.class)
                .buildInto(pluginsRoot);
    }
}
