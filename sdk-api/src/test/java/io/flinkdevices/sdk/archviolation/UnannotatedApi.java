package io.flinkdevices.sdk.archviolation;

/** A public type that does not say how stable it is. */
public final class UnannotatedApi {
    /** Nothing. */
    public static void nothing() {}
}
