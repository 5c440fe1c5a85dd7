package io.flinkdevices.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The OpenCL runtime's own share of the OpenCL plugin's start, measured in the rounds of {@link
 * TaskManagerStartBenchmark}: {@code benchmarks/opencl-floor.c}, compiled here with {@code gcc},
 * loads the ICD loader and calls {@code clGetPlatformIDs} and {@code clGetDeviceIDs} in a fresh
 * process without a JVM, the least any OpenCL driver does at a TaskManager's start.
 */
final class OpenClFloor {

    /** One run: the whole runtime share and, of it, {@code clGetPlatformIDs}, in nanoseconds. */
    static final class Sample {
        final long totalNanos;
        final long platformsNanos;

        Sample(long totalNanos, long platformsNanos) {
            this.totalNanos = totalNanos;
            this.platformsNanos = platformsNanos;
        }
    }

    private final Path binary;

    private OpenClFloor(Path binary) {
        this.binary = binary;
    }

    /**
     * Compiles {@code source} into {@code work}; empty with the reason in {@code why} when there is
     * no source, no {@code gcc} or the compile fails.
     */
    static Optional<OpenClFloor> compile(String source, Path work, StringBuilder why) throws Exception {
        if (source == null) {
            why.append("no --opencl-floor source given");
            return Optional.empty();
        }
        if (!Files.isRegularFile(Path.of(source))) {
            why.append("no OpenCL floor program at ").append(source);
            return Optional.empty();
        }
        Path binary = work.resolve("opencl-floor");
        try {
            ChildProcess.output(new ProcessBuilder("gcc", "-O1", "-o", binary.toString(), source, "-ldl"), "gcc " + source);
        } catch (IOException e) {
            why.append("no gcc to compile ").append(source).append(" (").append(e.getMessage()).append(")");
            return Optional.empty();
        } catch (IllegalStateException e) {
            why.append(e.getMessage());
            return Optional.empty();
        }
        return Optional.of(new OpenClFloor(binary));
    }

    /** One fresh process; its line is {@code load .. ms, clGetPlatformIDs .. ms (..), ..., total .. ms}. */
    Sample run() throws Exception {
        String output = ChildProcess.output(new ProcessBuilder(binary.toString()), "the OpenCL floor program");
        return new Sample(millisAfter(output, "total "), millisAfter(output, "clGetPlatformIDs "));
    }

    private static long millisAfter(String line, String label) {
        int at = line.indexOf(label);
        if (at < 0) {
            throw new IllegalStateException("no '" + label + "' in the OpenCL floor program's line: " + line);
        }
        String rest = line.substring(at + label.length());
        String number = List.of(rest.split(" ")).get(0);
        return Math.round(Double.parseDouble(number) * 1_000_000);
    }
}
