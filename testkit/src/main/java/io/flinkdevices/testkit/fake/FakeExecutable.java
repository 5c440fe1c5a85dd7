package io.flinkdevices.testkit.fake;

import io.flinkdevices.testkit.fake.internal.FakeFiles;
import io.flinkdevices.testkit.fake.internal.Shell;

import org.apache.flink.annotation.PublicEvolving;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * A program that stands in for a vendor tool ({@code nvidia-smi}, {@code amd-smi}, a discovery
 * script): a generated POSIX {@code sh} script that prints given stdout and stderr, waits a given
 * delay and exits with a given code, and records the arguments of every call.
 *
 * <p>It behaves the same on every run unless told otherwise: a {@link Builder} can give a
 * different {@link Response} for the n-th call ({@link Builder#onCall(int, Response)}) or for
 * certain arguments ({@link Builder#whenArguments(List, Response)}, {@link
 * Builder#whenArgument(String, Response)}). Rules are tried in that order: the call number first,
 * then argument rules in the order they were added, then the default response.
 *
 * <pre>{@code
 * FakeExecutable smi = FakeExecutable.named("acme-smi")
 *         .whenArgument("--list", Response.success("Stick 0: Acme Tensor Stick ...\n"))
 *         .exitCode(2).stderr("usage: acme-smi --list\n")
 *         .installIn(binFolder);
 * // ... run the driver ...
 * assertThat(smi.invocations()).containsExactly(List.of("--list"));
 * }</pre>
 *
 * <p>Thread-safe: the script and the Java side agree through a lock folder, so concurrent calls
 * are numbered without gaps or repeats and {@link #invocations()} sees complete records only.
 * Changing the behaviour ({@link #respondWith(Response)}) replaces the script in one rename; a
 * call already running finishes with the behaviour it started with. Needs a POSIX system ({@code
 * sh}, {@code cat}, {@code sleep}, {@code mkdir}, {@code rmdir}); Windows is not supported.
 */
@PublicEvolving
public final class FakeExecutable {

    private static final String LOCK = "lock";
    private static final String COUNT = "count";
    private static final String CALLS = "calls";
    private static final Duration LOCK_WAIT = Duration.ofSeconds(10);

    private final String name;
    private final Path path;
    private final Path dataDir;
    private final Object mutex = new Object();
    private int generation;
    private Response fallback = Response.NOTHING;
    private List<CallRule> callRules = List.of();
    private List<ArgRule> argRules = List.of();

    private FakeExecutable(String name, Path folder) {
        this.name = name;
        this.path = folder.toAbsolutePath().resolve(name);
        this.dataDir = folder.toAbsolutePath().resolve("." + name + ".fake");
    }

    /**
     * Starts describing a fake program called {@code name} (a file name, no folder). By default
     * it prints nothing and exits with code 0.
     */
    public static Builder named(String name) {
        return new Builder(name);
    }

    /** The program's file name, e.g. {@code acme-smi}. */
    public String name() {
        return name;
    }

    /** The absolute path of the script: what a driver's {@code *.path} parameter points at. */
    public Path path() {
        return path;
    }

    /** Whether the script is present (it is gone after {@link #remove()}). */
    public boolean isInstalled() {
        return Files.isRegularFile(path);
    }

    /**
     * The arguments of every call so far, oldest first, one list per call (empty for a call
     * without arguments). Arguments are recorded exactly, spaces and newlines included.
     */
    public List<List<String>> invocations() {
        return withLock(
                () -> {
                    TreeMap<Integer, List<String>> byNumber = new TreeMap<>();
                    Path calls = dataDir.resolve(CALLS);
                    if (!Files.isDirectory(calls)) {
                        return List.of();
                    }
                    try (Stream<Path> records = Files.list(calls)) {
                        for (Path record : (Iterable<Path>) records::iterator) {
                            String file = record.getFileName().toString();
                            if (file.chars().allMatch(Character::isDigit)) {
                                byNumber.put(Integer.parseInt(file), readRecord(record));
                            }
                        }
                    }
                    return List.copyOf(byNumber.values());
                });
    }

    /** How many times the program was called so far. */
    public int invocationCount() {
        return invocations().size();
    }

    /** Forgets every recorded call; the next call is call number 1 again. */
    public void reset() {
        withLock(
                () -> {
                    FakeFiles.deleteContents(dataDir.resolve(CALLS));
                    Files.deleteIfExists(dataDir.resolve(COUNT));
                    return null;
                });
    }

    /**
     * From now on answers every call with {@code response}, dropping the per-call and
     * per-argument rules. Calls already running are not affected.
     */
    public void respondWith(Response response) {
        Objects.requireNonNull(response, "response");
        synchronized (mutex) {
            write(response, List.of(), List.of());
        }
    }

    /**
     * From now on every call waits {@code delay} before it answers, with the response it would
     * give anyway (its rules are kept): a slow tool, or with a long delay a hanging one. Installs
     * the script again after {@link #remove()}. Calls already running are not affected.
     */
    public void delayEveryCall(Duration delay) {
        Objects.requireNonNull(delay, "delay");
        changeEveryResponse(r -> r.withDelay(delay));
    }

    /**
     * From now on answers with {@code change} applied to every response (the default and each
     * rule's), keeping the rules: for example a tool that prints each line twice. Installs the
     * script again after {@link #remove()}. Calls already running are not affected.
     */
    public void changeEveryResponse(UnaryOperator<Response> change) {
        Objects.requireNonNull(change, "change");
        synchronized (mutex) {
            List<CallRule> calls = new ArrayList<>();
            for (CallRule r : callRules) {
                calls.add(new CallRule(r.call, Objects.requireNonNull(change.apply(r.response))));
            }
            List<ArgRule> args = new ArrayList<>();
            for (ArgRule r : argRules) {
                args.add(
                        new ArgRule(
                                r.exact, r.contains, Objects.requireNonNull(change.apply(r.response))));
            }
            write(Objects.requireNonNull(change.apply(fallback)), calls, args);
        }
    }

    /**
     * Deletes the script, as if the tool were not installed; the record of past calls stays
     * readable. {@link #respondWith(Response)} installs it again.
     */
    public void remove() {
        synchronized (mutex) {
            try {
                Files.deleteIfExists(path);
            } catch (IOException e) {
                throw new UncheckedIOException("Cannot remove fake executable " + path, e);
            }
        }
    }

    @Override
    public String toString() {
        return "FakeExecutable[" + path + "]";
    }

    private void write(Response fallback, List<CallRule> callRules, List<ArgRule> argRules) {
        this.fallback = fallback;
        this.callRules = List.copyOf(callRules);
        this.argRules = List.copyOf(argRules);
        try {
            Files.createDirectories(dataDir.resolve(CALLS));
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create " + dataDir, e);
        }
        int gen = ++generation;
        StringBuilder sb = new StringBuilder();
        sb.append("#!").append(Shell.sh()).append('\n');
        sb.append("# Fake '")
                .append(name)
                .append("' generated by the flink-devices testkit; rewritten on every change.\n");
        sb.append("d=").append(Shell.quote(dataDir.toString())).append('\n');
        appendRecording(sb);
        sb.append(
                "has() { w=$1; shift; for a in \"$@\"; do if [ \"$a\" = \"$w\" ]; then return 0;"
                        + " fi; done; return 1; }\n");
        int id = 0;
        appendResponse(sb, gen, id++, fallback);
        StringBuilder dispatch = new StringBuilder();
        if (!callRules.isEmpty()) {
            dispatch.append("case \"$n\" in\n");
            for (CallRule rule : callRules) {
                int rid = id++;
                appendResponse(sb, gen, rid, rule.response);
                dispatch.append("  ").append(rule.call).append(") r").append(rid).append(" ;;\n");
            }
            dispatch.append("esac\n");
        }
        for (ArgRule rule : argRules) {
            int rid = id++;
            appendResponse(sb, gen, rid, rule.response);
            dispatch.append("if ").append(rule.condition()).append("; then r").append(rid);
            dispatch.append("; fi\n");
        }
        sb.append(dispatch).append("r0\n");
        FakeFiles.writeAtomically(path, sb.toString(), true);
    }

    private void appendRecording(StringBuilder sb) {
        String mkdir = Shell.quote(Shell.systemProgram("mkdir"));
        String rmdir = Shell.quote(Shell.systemProgram("rmdir"));
        String sleep = Shell.quote(Shell.systemProgram("sleep"));
        long maxTries = LOCK_WAIT.toMillis() / 5;
        sb.append("tries=0\n");
        sb.append("while ! ").append(mkdir).append(" \"$d/" + LOCK + "\" 2>/dev/null; do\n");
        sb.append("  tries=$((tries + 1))\n");
        sb.append("  if [ \"$tries\" -ge ").append(maxTries).append(" ]; then\n");
        sb.append("    echo \"fake ")
                .append(name.replace("\"", ""))
                .append(": $d/" + LOCK + " was held for too long\" >&2\n");
        sb.append("    exit 97\n");
        sb.append("  fi\n");
        sb.append("  ").append(sleep).append(" 0.005\n");
        sb.append("done\n");
        sb.append("n=0\n");
        sb.append("if [ -f \"$d/" + COUNT + "\" ]; then read -r n < \"$d/" + COUNT + "\"; fi\n");
        sb.append("n=$((n + 1))\n");
        sb.append("echo \"$n\" > \"$d/" + COUNT + "\"\n");
        sb.append("{ echo \"$#\"; printf '%s\\0' \"$@\"; } > \"$d/" + CALLS + "/$n\"\n");
        sb.append(rmdir).append(" \"$d/" + LOCK + "\"\n");
    }

    private void appendResponse(StringBuilder sb, int gen, int id, Response r) {
        String base = "g" + gen + "-r" + id;
        sb.append("r").append(id).append("() {\n");
        if (!r.delay.isZero()) {
            long millis = r.delay.toMillis();
            sb.append("  ")
                    .append(Shell.quote(Shell.systemProgram("sleep")))
                    .append(' ')
                    .append(String.format(Locale.ROOT, "%d.%03d", millis / 1000, millis % 1000))
                    .append('\n');
        }
        String cat = Shell.quote(Shell.systemProgram("cat"));
        if (!r.stdout.isEmpty()) {
            FakeFiles.writeAtomically(dataDir.resolve(base + ".out"), r.stdout, false);
            sb.append("  ").append(cat).append(" \"$d/").append(base).append(".out\"\n");
        }
        if (!r.stderr.isEmpty()) {
            FakeFiles.writeAtomically(dataDir.resolve(base + ".err"), r.stderr, false);
            sb.append("  ").append(cat).append(" \"$d/").append(base).append(".err\" >&2\n");
        }
        sb.append("  exit ").append(r.exitCode).append("\n}\n");
    }

    private static List<String> readRecord(Path record) throws IOException {
        byte[] bytes = Files.readAllBytes(record);
        int newline = 0;
        while (newline < bytes.length && bytes[newline] != '\n') {
            newline++;
        }
        int count =
                Integer.parseInt(new String(bytes, 0, newline, StandardCharsets.US_ASCII).trim());
        List<String> args = new ArrayList<>(count);
        int start = newline + 1;
        for (int i = start; i < bytes.length && args.size() < count; i++) {
            if (bytes[i] == 0) {
                args.add(new String(bytes, start, i - start, StandardCharsets.UTF_8));
                start = i + 1;
            }
        }
        return List.copyOf(args);
    }

    private interface IoAction<T> {
        T run() throws IOException;
    }

    private <T> T withLock(IoAction<T> action) {
        synchronized (mutex) {
            Path lock = dataDir.resolve(LOCK);
            long deadline = System.nanoTime() + LOCK_WAIT.toNanos();
            try {
                Files.createDirectories(dataDir);
                while (true) {
                    try {
                        Files.createDirectory(lock);
                        break;
                    } catch (FileAlreadyExistsException e) {
                        if (System.nanoTime() > deadline) {
                            throw new IllegalStateException(
                                    "The lock " + lock + " of fake " + name + " is held too long");
                        }
                        Thread.sleep(1);
                    }
                }
                try {
                    return action.run();
                } finally {
                    Files.deleteIfExists(lock);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("Cannot read the calls of fake " + name, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted waiting for fake " + name, e);
            }
        }
    }

    /**
     * What one call of a fake program does: wait {@link #delay()}, print {@link #stdout()} and
     * {@link #stderr()}, exit with {@link #exitCode()}. Immutable.
     */
    @PublicEvolving
    public static final class Response {

        private static final Response NOTHING = new Response("", "", 0, Duration.ZERO);

        private final String stdout;
        private final String stderr;
        private final int exitCode;
        private final Duration delay;

        private Response(String stdout, String stderr, int exitCode, Duration delay) {
            this.stdout = Objects.requireNonNull(stdout, "stdout");
            this.stderr = Objects.requireNonNull(stderr, "stderr");
            if (exitCode < 0 || exitCode > 255) {
                throw new IllegalArgumentException(
                        "An exit code is 0 to 255 but " + exitCode + " was given");
            }
            this.exitCode = exitCode;
            Objects.requireNonNull(delay, "delay");
            if (delay.isNegative()) {
                throw new IllegalArgumentException("A delay cannot be negative: " + delay);
            }
            this.delay = delay;
        }

        /** Prints {@code stdout} and exits with code 0. */
        public static Response success(String stdout) {
            return NOTHING.withStdout(stdout);
        }

        /** Prints {@code stderr} and exits with {@code exitCode}. */
        public static Response failure(int exitCode, String stderr) {
            return NOTHING.withExitCode(exitCode).withStderr(stderr);
        }

        /** The same response with other stdout. */
        public Response withStdout(String stdout) {
            return new Response(stdout, stderr, exitCode, delay);
        }

        /** The same response with other stderr. */
        public Response withStderr(String stderr) {
            return new Response(stdout, stderr, exitCode, delay);
        }

        /** The same response with another exit code (0 to 255). */
        public Response withExitCode(int exitCode) {
            return new Response(stdout, stderr, exitCode, delay);
        }

        /**
         * The same response, but the program first waits {@code delay} (millisecond precision):
         * for testing timeouts.
         */
        public Response withDelay(Duration delay) {
            return new Response(stdout, stderr, exitCode, delay);
        }

        /** What the program prints on stdout. */
        public String stdout() {
            return stdout;
        }

        /** What the program prints on stderr. */
        public String stderr() {
            return stderr;
        }

        /** The exit code. */
        public int exitCode() {
            return exitCode;
        }

        /** How long the program waits before printing and exiting. */
        public Duration delay() {
            return delay;
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof Response)) {
                return false;
            }
            Response r = (Response) o;
            return exitCode == r.exitCode
                    && stdout.equals(r.stdout)
                    && stderr.equals(r.stderr)
                    && delay.equals(r.delay);
        }

        @Override
        public int hashCode() {
            return Objects.hash(stdout, stderr, exitCode, delay);
        }

        @Override
        public String toString() {
            return "Response[exit "
                    + exitCode
                    + ", "
                    + stdout.length()
                    + " chars stdout, "
                    + stderr.length()
                    + " chars stderr, delay "
                    + delay
                    + "]";
        }
    }

    /**
     * Describes a fake program before it is written. Not thread-safe: describe on one thread,
     * then {@link #installIn(Path)}.
     */
    @PublicEvolving
    public static final class Builder {
        private final String name;
        private Response fallback = Response.NOTHING;
        private final List<CallRule> callRules = new ArrayList<>();
        private final List<ArgRule> argRules = new ArrayList<>();

        private Builder(String name) {
            if (name == null
                    || name.isEmpty()
                    || name.equals(".")
                    || name.equals("..")
                    || name.contains("/")
                    || name.contains("\0")) {
                throw new IllegalArgumentException(
                        "A fake executable's name is a plain file name but was '" + name + "'");
            }
            this.name = name;
        }

        /** The name of the program this builder describes. */
        public String name() {
            return name;
        }

        /** What the program prints on stdout unless a rule matches. */
        public Builder stdout(String stdout) {
            fallback = fallback.withStdout(stdout);
            return this;
        }

        /** What the program prints on stderr unless a rule matches. */
        public Builder stderr(String stderr) {
            fallback = fallback.withStderr(stderr);
            return this;
        }

        /** The exit code unless a rule matches (0 to 255). */
        public Builder exitCode(int exitCode) {
            fallback = fallback.withExitCode(exitCode);
            return this;
        }

        /** How long the program waits before printing, unless a rule matches. */
        public Builder delay(Duration delay) {
            fallback = fallback.withDelay(delay);
            return this;
        }

        /** The whole default response, replacing stdout, stderr, exit code and delay set before. */
        public Builder respond(Response response) {
            fallback = Objects.requireNonNull(response, "response");
            return this;
        }

        /**
         * Answers the {@code callNumber}-th call (1 for the first) with {@code response},
         * whatever its arguments. For a tool that fails once, then recovers, say.
         */
        public Builder onCall(int callNumber, Response response) {
            if (callNumber < 1) {
                throw new IllegalArgumentException(
                        "Calls are numbered from 1 but " + callNumber + " was given");
            }
            callRules.add(new CallRule(callNumber, Objects.requireNonNull(response, "response")));
            return this;
        }

        /** Answers calls whose arguments are exactly {@code arguments} with {@code response}. */
        public Builder whenArguments(List<String> arguments, Response response) {
            argRules.add(
                    new ArgRule(
                            List.copyOf(arguments),
                            null,
                            Objects.requireNonNull(response, "response")));
            return this;
        }

        /** Answers calls that have {@code argument} among their arguments with {@code response}. */
        public Builder whenArgument(String argument, Response response) {
            argRules.add(
                    new ArgRule(
                            null,
                            Objects.requireNonNull(argument, "argument"),
                            Objects.requireNonNull(response, "response")));
            return this;
        }

        /**
         * Writes the program into {@code folder} (created if missing), replacing a program of the
         * same name there, and returns it. Its record of calls starts empty.
         */
        public FakeExecutable installIn(Path folder) {
            FakeExecutable fake = new FakeExecutable(name, folder);
            FakeFiles.deleteRecursively(fake.dataDir);
            synchronized (fake.mutex) {
                fake.write(fallback, List.copyOf(callRules), List.copyOf(argRules));
            }
            return fake;
        }
    }

    private static final class CallRule {
        final int call;
        final Response response;

        CallRule(int call, Response response) {
            this.call = call;
            this.response = response;
        }
    }

    private static final class ArgRule {
        final List<String> exact;
        final String contains;
        final Response response;

        ArgRule(List<String> exact, String contains, Response response) {
            this.exact = exact;
            this.contains = contains;
            this.response = response;
        }

        String condition() {
            if (contains != null) {
                return "has " + Shell.quote(contains) + " \"$@\"";
            }
            StringBuilder sb = new StringBuilder("[ \"$#\" -eq ").append(exact.size()).append(" ]");
            for (int i = 0; i < exact.size(); i++) {
                sb.append(" && [ \"${")
                        .append(i + 1)
                        .append("}\" = ")
                        .append(Shell.quote(exact.get(i)))
                        .append(" ]");
            }
            return sb.toString();
        }
    }
}
