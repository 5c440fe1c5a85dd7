package io.flinkdevices.testkit.fake;

import io.flinkdevices.testkit.fake.internal.CallRecords;
import io.flinkdevices.testkit.fake.internal.FakeFiles;
import io.flinkdevices.testkit.fake.internal.FakeScript;
import io.flinkdevices.testkit.fake.internal.ResponseRules;

import org.apache.flink.annotation.PublicEvolving;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.UnaryOperator;

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

    private final String name;
    private final Path path;
    private final Path dataDir;
    private final Object mutex = new Object();
    private final CallRecords records;
    private int generation;
    private ResponseRules<Response> rules = new ResponseRules<>(Response.NOTHING);

    private FakeExecutable(String name, Path folder) {
        this.name = name;
        this.path = folder.toAbsolutePath().resolve(name);
        this.dataDir = folder.toAbsolutePath().resolve("." + name + ".fake");
        this.records = new CallRecords(name, dataDir, mutex);
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
        return records.invocations();
    }

    /** How many times the program was called so far. */
    public int invocationCount() {
        return invocations().size();
    }

    /** Forgets every recorded call; the next call is call number 1 again. */
    public void reset() {
        records.reset();
    }

    /**
     * From now on answers every call with {@code response}, dropping the per-call and
     * per-argument rules. Calls already running are not affected.
     */
    public void respondWith(Response response) {
        Objects.requireNonNull(response, "response");
        synchronized (mutex) {
            write(new ResponseRules<>(response));
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
            write(rules.map(change));
        }
    }

    /**
     * From now on answers calls with exactly {@code arguments} with {@code change} applied to the
     * response its rule for them gives (see {@link Builder#whenArguments}); other rules and the
     * default as they were. No-op where no rule is for those arguments. Installs the script again
     * after {@link #remove()}. Calls already running are not affected.
     */
    public void changeResponse(List<String> arguments, UnaryOperator<Response> change) {
        Objects.requireNonNull(arguments, "arguments");
        Objects.requireNonNull(change, "change");
        synchronized (mutex) {
            write(rules.mapArguments(List.copyOf(arguments), change));
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

    private void write(ResponseRules<Response> rules) {
        this.rules = rules;
        records.prepare();
        String script = rules.script(name, dataDir, ++generation, r -> new FakeScript.Reply(r.stdout, r.stderr, r.exitCode, r.delay));
        FakeFiles.writeAtomically(path, script, true);
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
        private ResponseRules<Response> rules = new ResponseRules<>(Response.NOTHING);

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
            rules = rules.withFallback(rules.fallback().withStdout(stdout));
            return this;
        }

        /** What the program prints on stderr unless a rule matches. */
        public Builder stderr(String stderr) {
            rules = rules.withFallback(rules.fallback().withStderr(stderr));
            return this;
        }

        /** The exit code unless a rule matches (0 to 255). */
        public Builder exitCode(int exitCode) {
            rules = rules.withFallback(rules.fallback().withExitCode(exitCode));
            return this;
        }

        /** How long the program waits before printing, unless a rule matches. */
        public Builder delay(Duration delay) {
            rules = rules.withFallback(rules.fallback().withDelay(delay));
            return this;
        }

        /** The whole default response, replacing stdout, stderr, exit code and delay set before. */
        public Builder respond(Response response) {
            rules = rules.withFallback(Objects.requireNonNull(response, "response"));
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
            rules = rules.onCall(callNumber, Objects.requireNonNull(response, "response"));
            return this;
        }

        /** Answers calls whose arguments are exactly {@code arguments} with {@code response}. */
        public Builder whenArguments(List<String> arguments, Response response) {
            rules = rules.whenArguments(List.copyOf(arguments), Objects.requireNonNull(response, "response"));
            return this;
        }

        /** Answers calls that have {@code argument} among their arguments with {@code response}. */
        public Builder whenArgument(String argument, Response response) {
            rules = rules.whenArgument(
                    Objects.requireNonNull(argument, "argument"), Objects.requireNonNull(response, "response"));
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
                fake.write(rules);
            }
            return fake;
        }
    }
}
