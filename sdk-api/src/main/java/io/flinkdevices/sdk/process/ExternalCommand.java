package io.flinkdevices.sdk.process;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.config.DriverParams;

import org.apache.flink.annotation.PublicEvolving;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs an external program (a vendor tool, a discovery script) the way a TaskManager can afford:
 * an argument list and never a shell string, a hard timeout that kills the program and every
 * process it started, stdout and stderr drained concurrently so that neither can block the
 * program, and the process destroyed on every path.
 *
 * <p>A run owns every process the program starts: when {@link #run()} returns or throws (exit,
 * timeout, interrupt), none of them is left running. Children are found through {@link
 * ProcessHandle#descendants()} while the program runs and, on Linux, through the environment
 * variable {@value #MARKER_ENV} that every child inherits, so that children whose parent already
 * exited are found too. A program that must leave a daemon behind cannot be run with this class.
 * A run returns the program's whole output or fails: output that does not end by the timeout (a
 * process out of the run's reach holding the program's stdout) is an error, never handed back cut
 * short.
 *
 * <p>A program whose run did not die when killed (blocked in the kernel on a device that no longer
 * answers, where even {@code SIGKILL} waits) is not started again while that process is there:
 * {@link #run()} then fails at once saying so, instead of adding a stuck process and its threads
 * every time a monitor samples.
 *
 * <p>Instances are immutable and can be run many times from any thread.
 */
@PublicEvolving
public final class ExternalCommand {

    /** The most of a program's stdout a run keeps; {@link Result#stdoutTruncated()} says when it printed more. */
    public static final int STDOUT_LIMIT_BYTES = 4 * 1024 * 1024;

    private static final int STDERR_TAIL = 2048;
    private static final Duration DRAIN_GRACE = Duration.ofMillis(500);

    /**
     * Environment variable set, with a value unique to one run, in every program this class
     * starts; its descendants inherit it, which lets a run find and kill them after their parent
     * exited.
     */
    public static final String MARKER_ENV = MarkedProcesses.MARKER_ENV;

    /**
     * Runs in progress, by their program's process, with their marker: a JVM that exits (a CLI
     * whose own time limit ran out, a TaskManager shutting down) kills their trees on the way out.
     */
    private static final Map<Process, String> RUNNING = new java.util.concurrent.ConcurrentHashMap<>();

    static {
        try {
            Runtime.getRuntime()
                    .addShutdownHook(
                            new Thread(
                                    () -> RUNNING.forEach((p, m) -> ProcessTree.killTree(p, new LinkedHashSet<>(), m)),
                                    "external-command-exit"));
        } catch (IllegalStateException | SecurityException e) {
            // the JVM is already shutting down: nothing to register for
        }
    }

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
        Objects.requireNonNull(args, "args");
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive but is " + timeout);
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(program.toString());
        for (String arg : args) {
            cmd.add(Objects.requireNonNull(arg, "an argument of " + program + " is null"));
        }
        String name = description == null || description.isBlank() ? program.toString() : description;
        return new ExternalCommand(cmd, timeout, Map.of(), name);
    }

    /**
     * The same command with extra environment variables for the child, added to those given by
     * earlier calls (a later value wins).
     */
    public ExternalCommand withEnvironment(Map<String, String> env) {
        Map<String, String> merged = new HashMap<>(environment);
        merged.putAll(env);
        return new ExternalCommand(command, timeout, merged, description);
    }

    /** The program and its arguments. */
    public List<String> command() {
        return command;
    }

    /** The hard timeout. */
    public Duration timeout() {
        return timeout;
    }

    private static final AtomicLong RUNS = new AtomicLong();

    /**
     * A marker no other run on the host carries: this JVM's PID and a run counter make it unique
     * among running JVMs, 64 random bits apart from a PID reused later. Not {@code
     * UUID.randomUUID()}: its {@code SecureRandom} loads the security providers (about 100
     * classes and an entropy read) into a TaskManager start that needs no secret.
     */
    private static String newMarker() {
        return ProcessHandle.current().pid()
                + "-"
                + RUNS.incrementAndGet()
                + "-"
                + Long.toHexString(ThreadLocalRandom.current().nextLong());
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
        String marker = newMarker();
        ProcessBuilder pb = new ProcessBuilder(command);
        withoutJvmSignalChaining(pb.environment());
        pb.environment().putAll(environment);
        pb.environment().put(MARKER_ENV, marker);
        pb.redirectInput(ProcessBuilder.Redirect.PIPE);
        Path program = Path.of(command.get(0));
        if (program.getParent() != null) {
            DriverParams.requireFile(description, program, DriverParams.PathCheck.EXECUTABLE);
        }
        StuckRuns.refuseWhileStuck(command.get(0), description);
        long start = System.nanoTime();
        Process process;
        try {
            process = pb.start();
        } catch (IOException e) {
            throw new DeviceDriverException(
                    description + ": cannot start " + command.get(0) + ": " + e.getMessage(), e);
        }
        RUNNING.put(process, marker);
        Set<ProcessHandle> seen = new LinkedHashSet<>();
        OutputDrain out = new OutputDrain(process.getInputStream(), STDOUT_LIMIT_BYTES, false);
        OutputDrain err = new OutputDrain(process.getErrorStream(), STDERR_TAIL, true);
        boolean done = false;
        try {
            closeQuietly(process);
            out.start();
            err.start();
            if (!ProcessTree.waitWatchingChildren(process, start + timeout.toNanos(), seen)) {
                // What the program said on its own: once its children die first, a shell
                // program reports their deaths ("Killed") on stderr.
                String said = err.text();
                ProcessTree.killTree(process, seen, marker);
                done = true;
                out.join(DRAIN_GRACE);
                err.join(DRAIN_GRACE);
                throw new DeviceDriverException(
                        description
                                + ": "
                                + command.get(0)
                                + " did not finish within "
                                + human(timeout)
                                + (process.isAlive()
                                        ? " and did not die when killed (pid " + process.pid() + ": stuck in the kernel,"
                                                + " as a tool is whose device no longer answers); it is not started again"
                                                + " while that process is there"
                                        : " and was killed with its child processes")
                                + stderrSuffix(said));
            }
            // The program exited. What it left running (a child in the background, holding our
            // pipes or not) belongs to this run and dies with it. A finished drain proves
            // nothing: the JDK may close our pipe ends when the program exits.
            ProcessTree.killLeftovers(process.pid(), seen, marker);
            // Its pipes end now. A drain still reading is one a loaded machine has not scheduled
            // yet: it gets until the run's deadline (a fixed grace would hand back output cut short
            // as if the program had printed no more), and an output that does not end by then is
            // an error, never a silently partial result.
            long deadline = Math.max(start + timeout.toNanos(), System.nanoTime() + DRAIN_GRACE.toNanos());
            boolean outEnded = out.join(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            boolean errEnded = err.join(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            done = true;
            if (!outEnded || !errEnded) {
                throw new DeviceDriverException(description + ": " + command.get(0) + " exited with code "
                        + process.exitValue() + " but its " + (outEnded ? "stderr" : "stdout") + " did not end within "
                        + human(timeout) + " of its start; expected the output to end with the program (is a process it"
                        + " started still holding it open?)");
            }
            return new Result(
                    process.exitValue(),
                    out.text(),
                    err.text(),
                    out.truncated(),
                    Duration.ofNanos(System.nanoTime() - start));
        } catch (InterruptedException e) {
            // Cancelled (a caller's own time limit, a TaskManager shutting down): the tree dies
            // before this returns. The kill itself must not be cut short by the interrupt, so the
            // flag is restored only afterwards.
            ProcessTree.killTree(process, seen, marker);
            done = true;
            Thread.currentThread().interrupt();
            throw new DeviceDriverException(
                    description
                            + ": interrupted while running "
                            + command.get(0)
                            + "; it was killed with its child processes",
                    e);
        } finally {
            try {
                if (!done || process.isAlive()) {
                    boolean interrupted = Thread.interrupted();
                    ProcessTree.killTree(process, seen, marker);
                    if (interrupted) {
                        Thread.currentThread().interrupt();
                    }
                }
            } finally {
                RUNNING.remove(process);
                if (process.isAlive()) {
                    StuckRuns.add(command.get(0), process.toHandle());
                }
            }
        }
    }

    /**
     * Removes the JDK's {@code libjsig.so} from an inherited {@code LD_PRELOAD}. A TaskManager may be
     * started with it (signal chaining, for OpenCL runtimes that install signal handlers); it is
     * meant for that JVM, and in the programs a driver runs it only prints a deprecation warning
     * into their stderr, which would end up in error messages.
     */
    static void withoutJvmSignalChaining(Map<String, String> env) {
        String preload = env.get("LD_PRELOAD");
        if (preload == null) {
            return;
        }
        List<String> kept = new ArrayList<>();
        for (String entry : preload.split("[:\\s]+")) {
            if (!entry.isEmpty() && !entry.equals("libjsig.so") && !entry.endsWith("/libjsig.so")) {
                kept.add(entry);
            }
        }
        if (kept.isEmpty()) {
            env.remove("LD_PRELOAD");
        } else {
            env.put("LD_PRELOAD", String.join(":", kept));
        }
    }

    private static void closeQuietly(Process process) {
        try {
            process.getOutputStream().close();
        } catch (IOException ignored) {
            // the program does not read stdin
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
}
