package io.flinkdevices.nvidia;

import io.flinkdevices.testkit.fake.InstalledNvidiaHost;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;

/**
 * The stand-in {@code libnvidia-ml.so.1} of {@code src/test/native/nvml-standin.c}, built once per
 * test JVM with the host's {@code cc} (60 s at most) and copied next to each fake host's NVML
 * state. Where no C compiler is at hand the test is skipped with the reason printed.
 */
final class NvmlStandIn {

    private static final Path SOURCE = Path.of("src/test/native/nvml-standin.c");
    private static Path built;
    private static String whyNot;

    private NvmlStandIn() {}

    /** Places the stand-in at {@code host.nvmlLibrary()} and returns that path; skips the test without cc. */
    static Path installOn(InstalledNvidiaHost host) throws IOException {
        Path lib = build();
        Files.createDirectories(host.nvmlLibrary().getParent());
        Files.copy(lib, host.nvmlLibrary(), StandardCopyOption.REPLACE_EXISTING);
        return host.nvmlLibrary();
    }

    /** Why the stand-in cannot be built here; empty where it can. */
    static synchronized java.util.Optional<String> unavailable() {
        if (built == null && whyNot == null) {
            whyNot = compile();
        }
        return java.util.Optional.ofNullable(whyNot);
    }

    private static synchronized Path build() {
        if (built == null && whyNot == null) {
            whyNot = compile();
        }
        if (whyNot != null) {
            System.out.println("Skipped: " + whyNot);
            Assumptions.abort(whyNot);
        }
        return built;
    }

    private static String compile() {
        try {
            Path out = Files.createDirectories(Path.of("target", "nvml-standin")).resolve("libnvidia-ml.so.1");
            Process cc;
            try {
                cc = new ProcessBuilder("cc", "-shared", "-fPIC", "-O1", "-o", out.toString(), SOURCE.toString(), "-lpthread")
                        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            } catch (IOException e) {
                return "no C compiler (cc) to build the stand-in libnvidia-ml.so.1: " + e.getMessage();
            }
            boolean done = cc.waitFor(60, TimeUnit.SECONDS);
            if (!done) {
                cc.destroyForcibly();
                return "cc did not build the stand-in libnvidia-ml.so.1 within 60 s";
            }
            if (cc.exitValue() != 0) {
                return "cc could not build the stand-in libnvidia-ml.so.1 (exit code " + cc.exitValue() + ")";
            }
            built = out.toAbsolutePath();
            return null;
        } catch (IOException e) {
            return "cannot build the stand-in libnvidia-ml.so.1: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while building the stand-in libnvidia-ml.so.1";
        }
    }
}
