package io.flinkdevices.samples.fpga;

import io.flinkdevices.fpga.OpenClFpgaDriverFactory;
import io.flinkdevices.testkit.plugin.PluginFolder;

import org.jocl.CL;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes {@code plugins/fpga-opencl/} from the class path: flink-devices' OpenCL driver and the SDK
 * in one jar, plus JOCL's jar (its classes and native libraries) beside it, as the shipped plugin
 * holds them.
 */
final class FpgaPlugin {

    static final String FACTORY = OpenClFpgaDriverFactory.class.getName();

    private FpgaPlugin() {}

    static Path install(Path pluginsRoot) throws IOException {
        return PluginFolder.builder("fpga-opencl")
                .includePackageOf(OpenClFpgaDriverFactory.class)
                .includeSdk()
                .factory(OpenClFpgaDriverFactory.class)
                .includeJar(joclJar())
                .buildInto(pluginsRoot);
    }

    /** The jar {@code org.jocl.CL} comes from; naming the class does not load JOCL's library. */
    private static Path joclJar() throws IOException {
        try {
            Path jar = Path.of(CL.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (!Files.isRegularFile(jar)) {
                throw new IOException("JOCL must come from its jar for the plugin folder, but org.jocl.CL comes from " + jar);
            }
            return jar;
        } catch (URISyntaxException | NullPointerException e) {
            throw new IOException("cannot find the jar org.jocl.CL comes from: " + e, e);
        }
    }
}
