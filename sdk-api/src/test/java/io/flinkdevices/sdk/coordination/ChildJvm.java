package io.flinkdevices.sdk.coordination;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A separate JVM running {@link CoordinationChild} on this test's class path. */
final class ChildJvm implements AutoCloseable {

    /** The device ids that records of {@code file} give to process {@code pid}. */
    static java.util.List<String> holdings(java.nio.file.Path file, long pid) throws Exception {
        return io.flinkdevices.sdk.coordination.internal.RecordFormat.parse(java.nio.file.Files.readAllBytes(file)).records().stream()
                .filter(r -> r.pid() == pid)
                .map(io.flinkdevices.sdk.coordination.internal.DeviceRecord::deviceId)
                .collect(java.util.stream.Collectors.toList());
    }

    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> all = new ArrayList<>();

    private ChildJvm(Process process) {
        this.process = process;
        Thread reader =
                new Thread(
                        () -> {
                            try (BufferedReader r =
                                    new BufferedReader(
                                            new InputStreamReader(
                                                    process.getInputStream(), StandardCharsets.UTF_8))) {
                                String line;
                                while ((line = r.readLine()) != null) {
                                    lines.add(line);
                                    synchronized (all) {
                                        all.add(line);
                                    }
                                }
                            } catch (IOException ignored) {
                                // the child was killed
                            }
                        },
                        "child-jvm-reader-" + process.pid());
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code CoordinationChild} with {@code args}; stderr goes to stdout. */
    static ChildJvm start(String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // Small, quick-starting JVMs: many run at once on a two-core CI machine.
        cmd.add("-Xshare:auto");
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-Xmx64m");
        cmd.add("-XX:-UsePerfData");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(CoordinationChild.class.getName());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        return new ChildJvm(pb.start());
    }

    long pid() {
        return process.pid();
    }

    Process process() {
        return process;
    }

    /** Waits for a line starting with {@code prefix} and returns it. */
    String awaitLine(String prefix, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            String line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
            if (line == null) {
                throw new AssertionError(
                        "child "
                                + pid()
                                + " printed no line starting with '"
                                + prefix
                                + "' within "
                                + timeout
                                + (process.isAlive() ? "" : " (exited " + process.exitValue() + ")")
                                + "; output: "
                                + output());
            }
            if (line.startsWith(prefix)) {
                return line;
            }
        }
    }

    /** Waits for a normal exit and returns the exit code. */
    int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("child " + pid() + " did not exit within " + timeout + "; output: " + output());
        }
        return process.exitValue();
    }

    /** Kills the child with SIGKILL and waits until it is gone and reaped. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    String output() {
        synchronized (all) {
            return String.join("\n", all);
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }
}
