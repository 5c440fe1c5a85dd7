package io.flinkdevices.testkit.contract.internal;

import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeHost;

import java.util.ArrayList;
import java.util.List;

/**
 * What {@code RobustnessContract} does to a fake host's tool output, and what it reads back: which
 * programs ran, and the messages of the error a driver threw.
 */
public final class ToolOutputs {

    private ToolOutputs() {}

    /**
     * {@code text} with each line twice; JSON text with each element of every array of objects
     * twice instead, so that it stays JSON.
     */
    public static String eachLineTwice(String text) {
        if (text.isEmpty()) {
            return text;
        }
        String json = JsonTwice.eachElementTwice(text);
        if (json != null) {
            return json;
        }
        StringBuilder sb = new StringBuilder();
        for (String line : text.split("(?<=\n)")) {
            sb.append(line.endsWith("\n") ? line : line + "\n");
            sb.append(line.endsWith("\n") ? line : line + "\n");
        }
        return sb.toString();
    }

    /** How often the host's fake programs have been called so far. */
    public static int invocations(FakeHost host) {
        int calls = 0;
        for (FakeExecutable e : host.executables()) {
            calls += e.invocationCount();
        }
        return calls;
    }

    /** The names of the host's fake programs, if any was called since there were {@code before} calls. */
    public static List<String> programsRun(FakeHost host, int before) {
        List<String> names = new ArrayList<>();
        if (invocations(host) > before) {
            for (FakeExecutable e : host.executables()) {
                if (e.invocationCount() > 0) {
                    names.add(e.name());
                }
            }
        }
        return names;
    }

    /** The messages of {@code failure} and its causes, one per line. */
    public static String messages(Throwable failure) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = failure; t != null && sb.length() < 100_000; t = t.getCause()) {
            sb.append(t.getMessage()).append('\n');
            if (t.getCause() == t) {
                break;
            }
        }
        return sb.toString();
    }
}
