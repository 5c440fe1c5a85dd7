package io.flinkdevices.samples.gpu;

import java.nio.file.Files;
import java.nio.file.Path;

/** Whether this host has an NVIDIA GPU, judged without JCuda (so a test can check JCuda's verdict). */
final class GpuAvailability {

    private GpuAvailability() {}

    /** Null when {@code /dev/nvidia0} and {@code /dev/nvidiactl} exist; else why there is no GPU. */
    static String reasonWhyNot() {
        if (!Files.exists(Path.of("/dev/nvidiactl")) || !Files.exists(Path.of("/dev/nvidia0"))) {
            return "no NVIDIA GPU on this host (/dev/nvidia0 and /dev/nvidiactl absent)";
        }
        return null;
    }
}
