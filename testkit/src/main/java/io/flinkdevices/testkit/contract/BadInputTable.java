package io.flinkdevices.testkit.contract;

import org.apache.flink.annotation.PublicEvolving;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;

/**
 * Every bad input a driver can meet, one row each, and the one clear error it must give: a bad
 * config key or value, a missing file, a folder where a file is expected, an unreadable path, a
 * tool that hangs, exits non-zero, prints garbage or too much, duplicate device ids, ...
 *
 * <p>Purpose: an operator's only clue is the message of the exception Flink logs, so each bad
 * input must end in exactly that: an {@link Exception} (never an {@code Error}, which kills the
 * TaskManager), within a bound (never a hang), whose message names the full key or path, what was
 * expected and the operating system's reason. How it works: each row runs its attempt (create the
 * driver from the factory and retrieve devices) on its own thread; the row is a <em>clear
 * error</em> when the attempt throws an {@code Exception} in time whose message contains every
 * expected fragment and no stack frame; anything else (accepted silently, an {@code Error}, a
 * hang, a message missing a fragment) is <em>other</em>. What must hold: {@link Result#other()}
 * is zero. Needs: whatever fakes the rows set up; nothing of the host.
 *
 * <pre>{@code
 * BadInputTable.Result r = BadInputTable.forDriver("nvidia")
 *         .row("nvidia-smi.path is a folder", () -> create(Map.of("nvidia-smi.path", dir)),
 *                 "external-resource.gpu.param.nvidia-smi.path", "is a folder", "expected an executable file")
 *         .run();
 * r.assertAllClear();   // prints "nvidia bad inputs: 1 tried, 1 clear error, 0 other"
 * }</pre>
 */
@PublicEvolving
public final class BadInputTable {

    /** One attempt at using a driver with a bad input; it is expected to throw. */
    @FunctionalInterface
    @PublicEvolving
    public interface Attempt {
        /** Creates the driver and asks it for devices, or whatever the row's input reaches. */
        void run() throws Exception;
    }

    private static final Pattern STACK_FRAME = Pattern.compile("(?m)^\\s+at [\\w$.]+\\(");
    private static final Duration DEFAULT_BOUND = Duration.ofSeconds(30);

    private final String driver;
    private final List<Row> rows = new ArrayList<>();
    private final List<String> skipped = new ArrayList<>();
    private Duration bound = DEFAULT_BOUND;

    private BadInputTable(String driver) {
        this.driver = driver;
    }

    /** An empty table for the driver named {@code driver} in the summary line. */
    public static BadInputTable forDriver(String driver) {
        return new BadInputTable(Objects.requireNonNull(driver));
    }

    /** How long one attempt may take before it counts as a hang (default 30 s). */
    public BadInputTable bound(Duration bound) {
        this.bound = Objects.requireNonNull(bound);
        return this;
    }

    /**
     * Adds a row.
     *
     * @param input the bad input, as a reader of the summary names it
     * @param attempt what an operator's TaskManager would do with it
     * @param fragments what the message must contain: the full key or path, what was expected, the
     *     OS reason
     */
    public BadInputTable row(String input, Attempt attempt, String... fragments) {
        rows.add(new Row(input, attempt, List.of(fragments)));
        return this;
    }

    /** Leaves a row out with the reason (printed), for an input this host cannot produce. */
    public BadInputTable skip(String input, String reason) {
        skipped.add(input + ": " + reason);
        return this;
    }

    /** Runs every row, one after the other. */
    public Result run() {
        List<String> clear = new ArrayList<>();
        List<String> other = new ArrayList<>();
        for (Row row : rows) {
            String problem = row.check(bound);
            if (problem == null) {
                clear.add(row.input);
            } else {
                other.add(row.input + ": " + problem);
            }
        }
        return new Result(driver, clear, other, skipped);
    }

    private static final class Row {
        final String input;
        final Attempt attempt;
        final List<String> fragments;

        Row(String input, Attempt attempt, List<String> fragments) {
            this.input = input;
            this.attempt = attempt;
            this.fragments = fragments;
        }

        /** Null when the row ends in a clear error, else what went wrong. */
        String check(Duration bound) {
            FutureTask<Void> task =
                    new FutureTask<>(
                            () -> {
                                attempt.run();
                                return null;
                            });
            Thread thread = new Thread(task, "bad-input " + input);
            thread.setDaemon(true);
            thread.start();
            Throwable thrown;
            try {
                task.get(bound.toMillis(), TimeUnit.MILLISECONDS);
                return "accepted silently (no exception)";
            } catch (TimeoutException e) {
                task.cancel(true);
                return "no answer within " + bound.toMillis() + " ms (a TaskManager would hang)";
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted";
            } catch (ExecutionException e) {
                thrown = e.getCause();
            }
            if (!(thrown instanceof Exception)) {
                return "threw " + thrown + ", an Error that kills a TaskManager";
            }
            String message = String.valueOf(thrown.getMessage());
            if (STACK_FRAME.matcher(message).find()) {
                return "the message carries a stack trace: " + message;
            }
            List<String> missing = new ArrayList<>();
            for (String f : fragments) {
                if (!message.contains(f)) {
                    missing.add(f);
                }
            }
            return missing.isEmpty() ? null : "message lacks " + missing + ": " + message;
        }
    }

    /** What a run of the table found. */
    @PublicEvolving
    public static final class Result {
        private final String driver;
        private final List<String> clear;
        private final List<String> other;
        private final List<String> skipped;

        Result(String driver, List<String> clear, List<String> other, List<String> skipped) {
            this.driver = driver;
            this.clear = List.copyOf(clear);
            this.other = List.copyOf(other);
            this.skipped = List.copyOf(skipped);
        }

        /** How many rows ran. */
        public int tried() {
            return clear.size() + other.size();
        }

        /** How many rows ended in one clear error. */
        public int clearErrors() {
            return clear.size();
        }

        /** The rows that did not, each with what happened instead. */
        public List<String> other() {
            return other;
        }

        /** The rows left out, each with the reason. */
        public List<String> skipped() {
            return skipped;
        }

        /** {@code <driver> bad inputs: N tried, N clear error, N other}. */
        public String summary() {
            return driver + " bad inputs: " + tried() + " tried, " + clearErrors() + " clear error, "
                    + other.size() + " other";
        }

        /**
         * Prints the summary, the skipped rows and the other rows on stdout, and fails when a row is
         * other.
         *
         * @throws AssertionError listing every row that did not end in a clear error
         */
        public void assertAllClear() {
            System.out.println(summary());
            skipped.forEach(s -> System.out.println("  skipped " + s));
            other.forEach(o -> System.out.println("  other " + o));
            if (!other.isEmpty()) {
                throw new AssertionError(summary() + ":\n  " + String.join("\n  ", other));
            }
        }
    }
}
