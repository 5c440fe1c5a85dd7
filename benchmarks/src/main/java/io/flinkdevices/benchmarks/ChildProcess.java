package io.flinkdevices.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/** The benchmarks' measuring children: run one to its end and keep what it printed. */
final class ChildProcess {

    private ChildProcess() {}

    /**
     * Starts {@code pb} with stderr merged into stdout, reads all it prints and waits for it, two
     * minutes at most; returns the output.
     *
     * @throws IOException when it cannot start (no such program)
     * @throws IllegalStateException naming {@code what}, with the output, when it fails or runs
     *     past two minutes (then it is killed)
     */
    static String output(ProcessBuilder pb, String what) throws IOException, InterruptedException {
        Process p = pb.redirectErrorStream(true).start();
        String output;
        try (InputStream in = p.getInputStream()) {
            output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        if (!p.waitFor(2, TimeUnit.MINUTES) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException(what + " failed; its output:\n" + output.strip());
        }
        return output;
    }
}
