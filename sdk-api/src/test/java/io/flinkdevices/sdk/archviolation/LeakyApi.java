package io.flinkdevices.sdk.archviolation;

import org.apache.flink.annotation.PublicEvolving;

import io.flinkdevices.sdk.archviolation.internal.Secret;

import java.util.List;

/** A public type whose signatures hand out an internal type. */
@PublicEvolving
public final class LeakyApi {
    /** Returns internals in a generic type. */
    public static List<Secret> secrets() {
        return List.of(new Secret());
    }

    /** Internal types in private members are fine. */
    private static Secret hidden() {
        return new Secret();
    }
}
