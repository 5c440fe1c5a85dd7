package io.flinkdevices.sdk.archviolation.internal;

/** An internal type. */
public final class Secret {}
