package io.flinkdevices.sdk.process;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.config.DriverParams;

import org.apache.flink.annotation.PublicEvolving;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

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
 *
 * <p>Instances are immutable and can be run many times from any thread.
 */
@PublicEvolving
public final class ExternalCommand {

    /** The most of a program's stdout a run keeps; {@link Result#stdoutTruncated()} says when it printed more. */
    public static final int STDOUT_LIMIT_BYTES = 4 * 1024 * 1024;

    private static final int STDERR_TAIL = 2048;
    private static final Duration DRAIN_GRACE = Duration.ofMillis(500);
    private static final Duration EXEC_GRACE = Duration.ofSeconds(2);
    private static final Duration KILL_GRACE = Duration.ofSeconds(1);
    private static final long FIRST_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long MAX_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    /**
     * Environment variable set, with a value unique to one run, in every program this class
     * starts; its descendants inherit it, which lets a run find and kill them after their parent
     * exited.
     */
    public static final String MARKER_ENV = "FLINK_DEVICES_COMMAND_ID";

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
                                    () -> RUNNING.forEach((p, m) -> killTree(p, new LinkedHashSet<>(), m)),
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

    /**
     * Runs the command to completion and returns its exit code and output, whatever the exit
     * code.
     *
     * @throws DeviceDriverException when the program cannot be started or runs past the timeout
     *     (it and its descendants are then killed); the message names the program and ends with
     *     the tail of its stderr
     */
    public Result run() throws DeviceDriverException {
        String marker = UUID.randomUUID().toString();
        ProcessBuilder pb = new ProcessBuilder(command);
        withoutJvmSignalChaining(pb.environment());
        pb.environment().putAll(environment);
        pb.environment().put(MARKER_ENV, marker);
        pb.redirectInput(ProcessBuilder.Redirect.PIPE);
        Path program = Path.of(command.get(0));
        if (program.getParent() != null) {
            DriverParams.requireFile(description, program, DriverParams.PathCheck.EXECUTABLE);
        }
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
        Drain out = new Drain(process.getInputStream(), STDOUT_LIMIT_BYTES, false);
        Drain err = new Drain(process.getErrorStream(), STDERR_TAIL, true);
        boolean done = false;
        try {
            closeQuietly(process);
            out.start();
            err.start();
            if (!waitWatchingChildren(process, start + timeout.toNanos(), seen)) {
                // What the program said on its own: once its children die first, a shell
                // program reports their deaths ("Killed") on stderr.
                String said = err.text();
                killTree(process, seen, marker);
                done = true;
                out.join(DRAIN_GRACE);
                err.join(DRAIN_GRACE);
                throw new DeviceDriverException(
                        description
                                + ": "
                                + command.get(0)
                                + " did not finish within "
                                + human(timeout)
                                + " and was killed with its child processes"
                                + stderrSuffix(said));
            }
            // The program exited. What it left running (a child in the background, holding our
            // pipes or not) belongs to this run and dies with it. A finished drain proves
            // nothing: the JDK may close our pipe ends when the program exits.
            killLeftovers(process.pid(), seen, marker);
            out.join(DRAIN_GRACE);
            err.join(DRAIN_GRACE);
            done = true;
            return new Result(
                    process.exitValue(),
                    out.text(),
                    err.text(),
                    out.truncated,
                    Duration.ofNanos(System.nanoTime() - start));
        } catch (InterruptedException e) {
            // Cancelled (a caller's own time limit, a TaskManager shutting down): the tree dies
            // before this returns. The kill itself must not be cut short by the interrupt, so the
            // flag is restored only afterwards.
            killTree(process, seen, marker);
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
                    killTree(process, seen, marker);
                    if (interrupted) {
                        Thread.currentThread().interrupt();
                    }
                }
            } finally {
                RUNNING.remove(process);
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

    /**
     * Waits until {@code process} exits or {@code deadlineNanos} passes, recording its
     * descendants meanwhile: once the program exits, its orphans can no longer be found through
     * it.
     */
    private static boolean waitWatchingChildren(
            Process process, long deadlineNanos, Set<ProcessHandle> seen)
            throws InterruptedException {
        long poll = FIRST_POLL_NANOS;
        while (true) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                return !process.isAlive();
            }
            if (process.waitFor(Math.min(left, poll), TimeUnit.NANOSECONDS)) {
                return true;
            }
            process.descendants().forEach(seen::add);
            poll = Math.min(poll * 2, MAX_POLL_NANOS);
        }
    }

    /**
     * Kills {@code process}, the descendants seen while it ran, those it has now, and (on Linux)
     * every process that carries this run's marker.
     */
    private static void killTree(Process process, Set<ProcessHandle> seen, String marker) {
        // Children first, found while the root still runs: once it dies they are re-parented
        // and no longer its descendants, and a shell root could start new ones in between.
        Set<ProcessHandle> victims = new LinkedHashSet<>();
        process.descendants().forEach(victims::add);
        victims.addAll(seen);
        victims.addAll(processesMarkedWith(marker, process.pid()));
        killAll(victims);
        process.destroyForcibly();
        boolean interrupted = false;
        try {
            process.waitFor(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            interrupted = true;
        }
        // what the root forked between the snapshot and its death
        Set<ProcessHandle> late = new LinkedHashSet<>();
        for (ProcessHandle h : processesMarkedWith(marker, process.pid())) {
            if (!victims.contains(h)) {
                late.add(h);
            }
        }
        killAll(late);
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Kills what an exited program left running: the descendants seen, and marked processes. */
    private static void killLeftovers(long rootPid, Set<ProcessHandle> seen, String marker) {
        Set<ProcessHandle> victims = new LinkedHashSet<>();
        for (ProcessHandle h : seen) {
            if (h.isAlive()) {
                victims.add(h);
            }
        }
        victims.addAll(processesMarkedWith(marker, rootPid));
        killAll(victims);
    }

    /**
     * Kills {@code victims} and their descendants, the deepest first, so that no victim's death
     * re-parents a child before that child was found.
     */
    private static void killAll(Set<ProcessHandle> victims) {
        Deque<ProcessHandle> queue = new ArrayDeque<>(victims);
        List<ProcessHandle> order = new ArrayList<>();
        while (!queue.isEmpty()) {
            ProcessHandle h = queue.poll();
            order.add(h);
            h.descendants()
                    .forEach(
                            d -> {
                                if (victims.add(d)) {
                                    queue.add(d);
                                }
                            });
        }
        for (int i = order.size() - 1; i >= 0; i--) {
            order.get(i).destroyForcibly();
        }
        awaitGone(order);
    }

    /**
     * Waits, at most {@link #KILL_GRACE}, until every killed process has stopped running: SIGKILL
     * is delivered asynchronously, and a caller that returns (a CLI that exits) must not leave
     * one behind that is still about to die.
     */
    private static void awaitGone(List<ProcessHandle> killed) {
        long deadline = System.nanoTime() + KILL_GRACE.toNanos();
        for (ProcessHandle h : killed) {
            while (running(h) && System.nanoTime() < deadline) {
                Thread.onSpinWait();
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** Whether {@code h} still runs; a zombie (killed, not yet reaped by its parent) does not. */
    private static boolean running(ProcessHandle h) {
        if (!h.isAlive()) {
            return false;
        }
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(h.pid()), "stat"));
            char state = stat.charAt(stat.lastIndexOf(')') + 2);
            return state != 'Z' && state != 'X';
        } catch (IOException | RuntimeException e) {
            return h.isAlive();
        }
    }

    /**
     * Processes (Linux only) whose environment carries this run's marker. Only pids above the
     * program's are read: Linux hands out pids in increasing order, so the program's children are
     * there (barring a pid wrap-around during the run), and a run does not pay for reading every
     * process of a busy host.
     */
    private static List<ProcessHandle> processesMarkedWith(String marker, long rootPid) {
        Path proc = Path.of("/proc");
        if (!Files.isDirectory(proc)) {
            return List.of();
        }
        byte[] needle = (MARKER_ENV + "=" + marker).getBytes(StandardCharsets.UTF_8);
        long self = ProcessHandle.current().pid();
        List<ProcessHandle> found = new ArrayList<>();
        List<Long> unreadable = new ArrayList<>();
        // A plain name listing: no Path per entry, no glob; only pids above the program's are read.
        String[] names = proc.toFile().list();
        for (String name : names == null ? new String[0] : names) {
            if (name.isEmpty() || name.charAt(0) < '0' || name.charAt(0) > '9') {
                continue;
            }
            long pid;
            try {
                pid = Long.parseLong(name);
            } catch (NumberFormatException e) {
                continue;
            }
            if (pid <= rootPid || pid == self) {
                continue;
            }
            byte[] env = environ(pid);
            if (env != null && env.length == 0 && !withoutEnvironmentForGood(pid)) {
                unreadable.add(pid);
            } else if (env != null && contains(env, needle)) {
                ProcessHandle.of(pid).ifPresent(found::add);
            }
        }
        // A process in the middle of exec() shows an empty environment for a moment; a child
        // that the program started just before it exited is often exactly there.
        // Under load (a 2-core host running a test suite) the half second once allowed here fell
        // short; only such processes are waited for, so the grace is generous.
        long deadline = System.nanoTime() + EXEC_GRACE.toNanos();
        for (long pause = 1; !unreadable.isEmpty() && System.nanoTime() < deadline; ) {
            pause = Math.min(pause * 2, 20);
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            for (var it = unreadable.iterator(); it.hasNext(); ) {
                long pid = it.next();
                byte[] env = environ(pid);
                if (env == null || env.length > 0) {
                    it.remove();
                    if (env != null && contains(env, needle)) {
                        ProcessHandle.of(pid).ifPresent(found::add);
                    }
                } else if (withoutEnvironmentForGood(pid)) {
                    it.remove(); // it exited meanwhile
                }
            }
        }
        return found;
    }

    /** The raw environment of {@code pid}; null when it is gone or belongs to another user. */
    private static byte[] environ(long pid) {
        try {
            return Files.readAllBytes(Path.of("/proc", Long.toString(pid), "environ"));
        } catch (IOException | SecurityException e) {
            return null;
        }
    }

    /**
     * Whether {@code pid} shows an empty environment for good rather than for the moment of an
     * exec(): a kernel thread (a child of kthreadd, pid 2) never has one, a zombie no longer has
     * one. Neither can be a program's live leftover, and waiting on them would only delay the run.
     */
    private static boolean withoutEnvironmentForGood(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            char state = fields[0].charAt(0);
            return pid == 2 || "2".equals(fields[1]) || state == 'Z' || state == 'X';
        } catch (IOException | RuntimeException e) {
            return true;
        }
    }

    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            if (i > 0 && haystack[i - 1] != 0) {
                continue;
            }
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i + needle.length == haystack.length || haystack[i + needle.length] == 0;
        }
        return false;
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

    /**
     * Threads that drain programs' output. Reused between runs: starting two threads per run
     * was a measurable part of a short program's cost (an nvidia-smi query takes ~2 ms).
     */
    private static final ExecutorService DRAINS =
            Executors.newCachedThreadPool(
                    r -> {
                        Thread t = new Thread(r, "external-command-drain");
                        t.setDaemon(true);
                        return t;
                    });

    /** Reads a stream to its end on a pooled thread, keeping a head or a tail of it. */
    private static final class Drain implements Runnable {
        private final CountDownLatch finished = new CountDownLatch(1);
        private final InputStream in;
        private final int limit;
        private final boolean keepTail;
        private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        private volatile boolean truncated;

        Drain(InputStream in, int limit, boolean keepTail) {
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
            } finally {
                finished.countDown();
            }
        }

        void start() {
            DRAINS.execute(this);
        }

        boolean join(Duration d) throws InterruptedException {
            return finished.await(Math.max(1, d.toMillis()), TimeUnit.MILLISECONDS);
        }

        String text() {
            byte[] bytes;
            synchronized (buffer) {
                bytes = buffer.toByteArray();
            }
            if (keepTail && bytes.length > limit) {
                bytes = Arrays.copyOfRange(bytes, bytes.length - limit, bytes.length);
            }
            return new String(bytes, StandardCharsets.UTF_8);
        }
    }
}
