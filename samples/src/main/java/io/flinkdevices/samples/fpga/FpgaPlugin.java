package io.flinkdevices.samples.fpga;

import java.io.IOException;
import java.nio.file.Path;

/** Writes {@code plugins/fpga-opencl/} from the class path: flink-devices' OpenCL driver. */
final class FpgaPlugin {

    static final String FACTORY = "io.flinkdevices.fpga.OpenClFpgaDriverFactory";

    private FpgaPlugin() {}

    static Path install(Path pluginsRoot) throws IOException {
        throw new IllegalStateException("the OpenCL driver plugin is not available to this build yet");
    }
}
