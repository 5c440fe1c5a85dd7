package io.flinkdevices.testkit.simulated;

import io.flinkdevices.testkit.plugin.PluginFolder;

import org.apache.flink.annotation.PublicEvolving;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Installs the simulated device drivers into a plugins folder.
 *
 * <pre>{@code
 * SimulatedDevices.installGpuPlugin(Path.of("plugins"));
 * // plugins/simulated-gpu/simulated-gpu.jar, ready for
 * // external-resource.gpu.driver-factory.class: io.flinkdevices.testkit.simulated.SimulatedGpuDriverFactory
 * }</pre>
 *
 * <p>A class of its own, not a method of the factory, so that the plugin's code never refers to
 * the plugin builder, which the plugin class loader cannot see.
 */
@PublicEvolving
public final class SimulatedDevices {

    /** The plugin folder name {@link #installGpuPlugin(Path)} uses. */
    public static final String GPU_PLUGIN_NAME = "simulated-gpu";

    /** The value of {@code external-resource.<name>.driver-factory.class} for simulated GPUs. */
    public static final String GPU_FACTORY_CLASS = SimulatedGpuDriverFactory.class.getName();

    private SimulatedDevices() {}

    /**
     * Writes {@code pluginsRoot/simulated-gpu/simulated-gpu.jar}: the simulated GPU driver with the
     * flink-devices SDK, registered as a factory, replacing any folder of that name.
     *
     * @return the jar written
     * @throws IOException when the folder cannot be written
     */
    public static Path installGpuPlugin(Path pluginsRoot) throws IOException {
        return PluginFolder.builder(GPU_PLUGIN_NAME)
                .includePackageOf(SimulatedGpuDriverFactory.class)
                .includeSdk()
                .factory(SimulatedGpuDriverFactory.class)
                .buildInto(pluginsRoot);
    }
}
