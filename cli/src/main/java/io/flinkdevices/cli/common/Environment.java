package io.flinkdevices.cli.common;

import java.util.Map;

/** The process environment, replaceable in tests (Java cannot set a variable of its own). */
@FunctionalInterface
public interface Environment {

    /** The value of {@code name}, or {@code null} when it is not set. */
    String get(String name);

    /** The environment this process was started with. */
    static Environment system() {
        return System::getenv;
    }

    /** An environment holding exactly {@code variables}. */
    static Environment of(Map<String, String> variables) {
        Map<String, String> copy = Map.copyOf(variables);
        return copy::get;
    }
}
