package io.flinkdevices.samples.gpu;

import io.flinkdevices.nvidia.NvidiaGpuDriverFactory;
import io.flinkdevices.testkit.plugin.PluginFolder;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Writes {@code plugins/nvidia/} from the class path: flink-devices' NVIDIA driver and the SDK,
 * as the shipped plugin jar holds them (without JCuda: the job runs the driver's nvidia-smi
 * backend).
 */
public final class NvidiaPlugin {

    /** The driver's factory, as configured in {@code external-resource.<name>.driver-factory.class}. */
    public static final String FACTORY = NvidiaGpuDriverFactory.class.getName();

    private NvidiaPlugin() {}

    /** Builds the plugin folder under {@code pluginsRoot}; returns its jar. */
    public static Path install(Path pluginsRoot) throws IOException {
        return PluginFolder.builder("nvidia")
                .includePackageOf(NvidiaGpuDriverFactory.class)
                .includeSdk()
                .factory(NvidiaGpuDriverFactory.class)
                .buildInto(pluginsRoot);
    }
}
