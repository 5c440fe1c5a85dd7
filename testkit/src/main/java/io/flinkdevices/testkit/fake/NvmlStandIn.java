package io.flinkdevices.testkit.fake;

import org.apache.flink.annotation.PublicEvolving;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A stand-in {@code libnvidia-ml.so.1} for hosts without an NVIDIA GPU: exactly the NVML functions
 * the NVIDIA driver binds, with {@code nvml.h}'s signatures and structure layouts, answering from
 * an {@link InstalledNvidiaHost}'s state file ({@link InstalledNvidiaHost#nvmlState()}), read
 * again on every call, so that GPUs lost, Xid and ECC events and moving metrics reach a driver
 * that samples through NVML while a job runs. The driver loads it through its {@code
 * nvml.library} parameter, in a plugin class loader too.
 *
 * <p>Built once per JVM from the C source this jar carries ({@code nvml-standin.c}) with the
 * host's {@code cc} (60 s at most), under {@code target/nvml-standin/}. Where no C compiler is at
 * hand, {@link #installOn} skips the calling test with the reason. Thread-safe.
 */
@PublicEvolving
public final class NvmlStandIn {

    private static final String SOURCE = "nvml-standin.c";
    private static final long COMPILE_SECONDS = 60;
    private static Path built;
    private static String whyNot;

    private NvmlStandIn() {}

    /**
     * Places the stand-in at {@code host.nvmlLibrary()} and returns that path, for the driver's
     * {@code nvml.library} parameter; skips the calling test (a JUnit assumption) where it cannot
     * be built, saying why.
     */
    public static Path installOn(InstalledNvidiaHost host) throws IOException {
        Optional<String> why = unavailable();
        if (why.isPresent()) {
            System.out.println("Skipped: " + why.get());
            Assumptions.abort(why.get());
        }
        Files.createDirectories(host.nvmlLibrary().getParent());
        Files.copy(built, host.nvmlLibrary(), StandardCopyOption.REPLACE_EXISTING);
        return host.nvmlLibrary();
    }

    /** Why the stand-in cannot be built here; empty where it can (it is then built). */
    public static synchronized Optional<String> unavailable() {
        if (built == null && whyNot == null) {
            whyNot = compile();
        }
        return Optional.ofNullable(whyNot);
    }

    private static String compile() {
        try {
            Path dir = Files.createDirectories(Path.of("target", "nvml-standin")).toAbsolutePath();
            Path source = dir.resolve(SOURCE);
            try (InputStream in = NvmlStandIn.class.getResourceAsStream(SOURCE)) {
                if (in == null) {
                    return "the testkit jar lacks " + SOURCE + " next to " + NvmlStandIn.class.getName();
                }
                Files.copy(in, source, StandardCopyOption.REPLACE_EXISTING);
            }
            Path out = dir.resolve("libnvidia-ml.so.1");
            Process cc;
            try {
                cc = new ProcessBuilder("cc", "-shared", "-fPIC", "-O1", "-o", out.toString(), source.toString(), "-lpthread")
                        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            } catch (IOException e) {
                return "no C compiler (cc) to build the stand-in libnvidia-ml.so.1: " + e.getMessage();
            }
            if (!cc.waitFor(COMPILE_SECONDS, TimeUnit.SECONDS)) {
                cc.destroyForcibly();
                return "cc did not build the stand-in libnvidia-ml.so.1 within " + COMPILE_SECONDS + " s";
            }
            if (cc.exitValue() != 0) {
                return "cc could not build the stand-in libnvidia-ml.so.1 (exit code " + cc.exitValue() + ")";
            }
            built = out;
            return null;
        } catch (IOException e) {
            return "cannot build the stand-in libnvidia-ml.so.1: " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted while building the stand-in libnvidia-ml.so.1";
        }
    }
}
