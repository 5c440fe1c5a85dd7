package io.flinkdevices.testkit.fake.internal;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * The responses of a fake program: a default, responses by call number, and responses by
 * arguments (exact, or one argument among them), in the order they were given. Immutable.
 *
 * @param <R> the response type
 */
public final class ResponseRules<R> {

    private final R fallback;
    private final List<CallRule<R>> calls;
    private final List<ArgRule<R>> args;

    /** Only a default response. */
    public ResponseRules(R fallback) {
        this(fallback, List.of(), List.of());
    }

    private ResponseRules(R fallback, List<CallRule<R>> calls, List<ArgRule<R>> args) {
        this.fallback = fallback;
        this.calls = List.copyOf(calls);
        this.args = List.copyOf(args);
    }

    /** The default response. */
    public R fallback() {
        return fallback;
    }

    /** The same rules with another default. */
    public ResponseRules<R> withFallback(R response) {
        return new ResponseRules<>(response, calls, args);
    }

    /** These rules and one for call number {@code call}. */
    public ResponseRules<R> onCall(int call, R response) {
        List<CallRule<R>> more = new ArrayList<>(calls);
        more.add(new CallRule<>(call, response));
        return new ResponseRules<>(fallback, more, args);
    }

    /** These rules and one for calls with exactly {@code exact} as arguments. */
    public ResponseRules<R> whenArguments(List<String> exact, R response) {
        return withArgRule(new ArgRule<>(exact, null, response));
    }

    /** These rules and one for calls with {@code argument} among their arguments. */
    public ResponseRules<R> whenArgument(String argument, R response) {
        return withArgRule(new ArgRule<>(null, argument, response));
    }

    private ResponseRules<R> withArgRule(ArgRule<R> rule) {
        List<ArgRule<R>> more = new ArrayList<>(args);
        more.add(rule);
        return new ResponseRules<>(fallback, calls, more);
    }

    /** The same rules with {@code change} applied to every response: call rules, argument rules, default. */
    public ResponseRules<R> map(UnaryOperator<R> change) {
        List<CallRule<R>> newCalls = new ArrayList<>();
        for (CallRule<R> r : calls) {
            newCalls.add(new CallRule<>(r.call, Objects.requireNonNull(change.apply(r.response))));
        }
        List<ArgRule<R>> newArgs = new ArrayList<>();
        for (ArgRule<R> r : args) {
            newArgs.add(new ArgRule<>(r.exact, r.contains, Objects.requireNonNull(change.apply(r.response))));
        }
        return new ResponseRules<>(Objects.requireNonNull(change.apply(fallback)), newCalls, newArgs);
    }

    /**
     * The same rules with {@code change} applied to the responses of the rules for calls with
     * exactly {@code exact} as arguments; every other rule as it was.
     */
    public ResponseRules<R> mapArguments(List<String> exact, UnaryOperator<R> change) {
        List<ArgRule<R>> newArgs = new ArrayList<>();
        for (ArgRule<R> r : args) {
            newArgs.add(exact.equals(r.exact) ? new ArgRule<>(r.exact, r.contains, Objects.requireNonNull(change.apply(r.response))) : r);
        }
        return new ResponseRules<>(fallback, calls, newArgs);
    }

    /** The script that answers by these rules (see {@link FakeScript}). */
    public String script(String name, Path dataDir, int generation, Function<R, FakeScript.Reply> reply) {
        FakeScript script = new FakeScript(name, dataDir, generation);
        script.fallback(reply.apply(fallback));
        for (CallRule<R> rule : calls) {
            script.onCall(rule.call, reply.apply(rule.response));
        }
        for (ArgRule<R> rule : args) {
            if (rule.contains != null) {
                script.whenArgument(rule.contains, reply.apply(rule.response));
            } else {
                script.whenArguments(rule.exact, reply.apply(rule.response));
            }
        }
        return script.render();
    }

    private static final class CallRule<R> {
        final int call;
        final R response;

        CallRule(int call, R response) {
            this.call = call;
            this.response = response;
        }
    }

    private static final class ArgRule<R> {
        final List<String> exact;
        final String contains;
        final R response;

        ArgRule(List<String> exact, String contains, R response) {
            this.exact = exact;
            this.contains = contains;
            this.response = response;
        }
    }
}
