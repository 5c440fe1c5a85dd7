package io.flinkdevices.nvidia.archviolation;

/** Violates the only-the-factory-is-public rule: a public helper beside the driver's factory. */
public final class PublicNvidiaHelper {

    private PublicNvidiaHelper() {}
}
