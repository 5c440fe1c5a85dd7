package io.flinkdevices.sdk.process;

import io.flinkdevices.sdk.DeviceDriverException;

import org.apache.flink.annotation.PublicEvolving;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Runs an external program (a vendor tool, a discovery script) the way a TaskManager can afford:
 * an argument list and never a shell string, a hard timeout that kills the program and every
 * process it started, stdout and stderr drained concurrently so that neither can block the
 * program, and the process destroyed on every path.
 *
 * <p>Instances are immutable and can be run many times from any thread.
 */
@PublicEvolving
public final class ExternalCommand {

    private static final int STDOUT_LIMIT = 4 * 1024 * 1024;
    private static final int STDERR_TAIL = 2048;
    private static final Duration DRAIN_GRACE = Duration.ofMillis(500);

    private final List<String> command;
    private final Duration timeout;
    private final Map<String, String> environment;
    private final String description;

    private ExternalCommand(
            List<String> command, Duration timeout, Map<String, String> env, String description) {
        this.command = List.copyOf(command);
        this.timeout = timeout;
        this.environment = Map.copyOf(env);
        this.description = description;
    }

    /**
     * A command whose program is {@code program} and arguments {@code args}, run with a timeout.
     *
     * @param description names the command in errors, e.g. the key that configured it
     */
    public static ExternalCommand of(
            Path program, List<String> args, Duration timeout, String description) {
        Objects.requireNonNull(program, "program");
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive but is " + timeout);
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(program.toString());
        cmd.addAll(args);
        return new ExternalCommand(cmd, timeout, Map.of(), description);
    }

    /** The same command with extra environment variables for the child. */
    public ExternalCommand withEnvironment(Map<String, String> env) {
        return new ExternalCommand(command, timeout, env, description);
    }

    /** The program and its arguments. */
    public List<String> command() {
        return command;
    }

    /** The hard timeout. */
    public Duration timeout() {
        return timeout;
    }

    /**
     * Runs the command to completion and returns its exit code and output, whatever the exit
     * code.
     *
     * @throws DeviceDriverException when the program cannot be started or runs past the timeout
     *     (it and its descendants are then killed); the message names the program and ends with
     *     the tail of its stderr
     */
    public Result run() throws DeviceDriverException {
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().putAll(environment);
        pb.redirectInput(ProcessBuilder.Redirect.PIPE);
        long start = System.nanoTime();
        Process process;
        try {
            process = pb.start();
        } catch (IOException e) {
            throw new DeviceDriverException(
                    description + ": cannot start " + command.get(0) + ": " + e.getMessage(), e);
        }
        Drain out = new Drain(process.getInputStream(), STDOUT_LIMIT, false);
        Drain err = new Drain(process.getErrorStream(), STDERR_TAIL, true);
        try {
            closeQuietly(process);
            out.start();
            err.start();
            boolean finished = process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
            if (!finished) {
                killTree(process);
                out.join(DRAIN_GRACE);
                err.join(DRAIN_GRACE);
                throw new DeviceDriverException(
                        description
                                + ": "
                                + command.get(0)
                                + " did not finish within "
                                + human(timeout)
                                + " and was killed with its child processes"
                                + stderrSuffix(err.text()));
            }
            // A child that inherited stdout can keep the pipe open after the program exits.
            if (!out.join(DRAIN_GRACE) || !err.join(DRAIN_GRACE)) {
                killTree(process);
                out.join(DRAIN_GRACE);
                err.join(DRAIN_GRACE);
            }
            return new Result(
                    process.exitValue(),
                    out.text(),
                    err.text(),
                    out.truncated,
                    Duration.ofNanos(System.nanoTime() - start));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DeviceDriverException(description + ": interrupted while running " + command.get(0), e);
        } finally {
            if (process.isAlive()) {
                killTree(process);
            }
        }
    }

    private static void closeQuietly(Process process) {
        try {
            process.getOutputStream().close();
        } catch (IOException ignored) {
            // the program does not read stdin
        }
    }

    /** Kills {@code process} and every process it started, children first. */
    static void killTree(Process process) {
        List<ProcessHandle> descendants = new ArrayList<>();
        process.descendants().forEach(descendants::add);
        process.destroyForcibly();
        for (ProcessHandle h : descendants) {
            h.destroyForcibly();
        }
        try {
            process.waitFor(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static String stderrSuffix(String stderr) {
        String s = stderr.strip();
        return s.isEmpty() ? "" : "; stderr ends with: " + s;
    }

    static String human(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }

    /** What a finished program printed and returned. */
    @PublicEvolving
    public static final class Result {
        private final int exitCode;
        private final String stdout;
        private final String stderrTail;
        private final boolean stdoutTruncated;
        private final Duration elapsed;

        Result(int exitCode, String stdout, String stderrTail, boolean truncated, Duration elapsed) {
            this.exitCode = exitCode;
            this.stdout = stdout;
            this.stderrTail = stderrTail;
            this.stdoutTruncated = truncated;
            this.elapsed = elapsed;
        }

        /** The exit code. */
        public int exitCode() {
            return exitCode;
        }

        /** Everything printed on stdout (up to 4 MiB), decoded as UTF-8. */
        public String stdout() {
            return stdout;
        }

        /** The last 2 KiB printed on stderr. */
        public String stderrTail() {
            return stderrTail;
        }

        /** Whether stdout was longer than what {@link #stdout()} holds. */
        public boolean stdoutTruncated() {
            return stdoutTruncated;
        }

        /** Wall time from start to exit. */
        public Duration elapsed() {
            return elapsed;
        }
    }

    /** Reads a stream to its end on its own thread, keeping a head or a tail of it. */
    private static final class Drain extends Thread {
        private final InputStream in;
        private final int limit;
        private final boolean keepTail;
        private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        private volatile boolean truncated;

        Drain(InputStream in, int limit, boolean keepTail) {
            super("external-command-drain");
            setDaemon(true);
            this.in = in;
            this.limit = limit;
            this.keepTail = keepTail;
        }

        @Override
        public void run() {
            byte[] chunk = new byte[8192];
            try (InputStream s = in) {
                int n;
                while ((n = s.read(chunk)) >= 0) {
                    synchronized (buffer) {
                        if (keepTail) {
                            buffer.write(chunk, 0, n);
                            if (buffer.size() > limit * 2) {
                                byte[] all = buffer.toByteArray();
                                buffer.reset();
                                buffer.write(all, all.length - limit, limit);
                                truncated = true;
                            }
                        } else if (buffer.size() < limit) {
                            buffer.write(chunk, 0, Math.min(n, limit - buffer.size()));
                            if (buffer.size() >= limit) {
                                truncated = true;
                            }
                        } else {
                            truncated = true;
                        }
                    }
                }
            } catch (IOException ignored) {
                // the stream closes when the process is killed
            }
        }

        boolean join(Duration d) throws InterruptedException {
            join(Math.max(1, d.toMillis()));
            return !isAlive();
        }

        String text() {
            byte[] bytes;
            synchronized (buffer) {
                bytes = buffer.toByteArray();
            }
            if (keepTail && bytes.length > limit) {
                bytes = java.util.Arrays.copyOfRange(bytes, bytes.length - limit, bytes.length);
            }
            return new String(bytes, StandardCharsets.UTF_8);
        }
    }
}
