package io.flinkdevices.nvidia.archviolation;

import java.io.IOException;

/** Violates the tools-through-the-SDK rule: runs its tool with a raw ProcessBuilder, no timeout. */
final class RawProcessNvidiaProbe {

    private RawProcessNvidiaProbe() {}

    static int run() throws IOException, InterruptedException {
        return new ProcessBuilder("nvidia-smi", "-L").start().waitFor();
    }

    static Process exec() throws IOException {
        return Runtime.getRuntime().exec(new String[] {"nvidia-smi"});
    }
}
