package io.flinkdevices.cli.flink;

import io.flinkdevices.sdk.nativelib.NativeGuard;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/** Turns a throwable and its causes into one line an operator can read. */
public final class Failures {

    /** Where JCuda's report of a failed native load starts its traces, after its banner. */
    private static final String NESTED_TRACES = "---(start of nested stack traces)---";

    private Failures() {}

    /**
     * {@code Type: message; caused by Type: message}, leaving out a cause whose text its wrapper
     * already repeats.
     */
    public static String describe(Throwable failure) {
        StringBuilder line = new StringBuilder();
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
            String message = t.getMessage() == null ? null : withoutStackTrace(t.getMessage());
            String part =
                    t.getClass().getSimpleName()
                            + (message == null || message.isBlank() ? "" : ": " + message.strip());
            if (line.length() > 0) {
                if (message != null && line.indexOf(message.strip()) >= 0) {
                    continue;
                }
                line.append("; caused by ");
            }
            line.append(part);
        }
        return line.toString();
    }

    /**
     * A message without the stack traces some bindings put into it (JCuda's {@code
     * UnsatisfiedLinkError} carries 39 frames): its lines up to the first frame, trace headers
     * left out.
     */
    static String withoutStackTrace(String message) {
        if (message.contains(NESTED_TRACES)) {
            // JCuda's report: a banner (operating system, architecture), then the traces of each
            // attempt; its first line and the linker's reason are what to read
            return NativeGuard.oneLine(message);
        }
        StringBuilder kept = new StringBuilder();
        for (String line : message.split("\\R")) {
            String s = line.strip();
            if (s.startsWith("at ") || s.matches("\\.\\.\\. \\d+ more") || s.startsWith("Caused by:")
                    || s.startsWith("Suppressed:") || s.startsWith("Stack trace")) {
                break;
            }
            if (!s.isEmpty()) {
                kept.append(kept.length() == 0 ? "" : " ").append(s);
            }
        }
        return kept.toString();
    }

    /** Whether Flink's TaskManager would not catch {@code failure} (it catches only Exceptions). */
    public static boolean escapesFlink(Throwable failure) {
        return !(failure instanceof Exception);
    }
}
