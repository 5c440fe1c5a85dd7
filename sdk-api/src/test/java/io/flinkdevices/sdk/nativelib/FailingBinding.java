package io.flinkdevices.sdk.nativelib;

/** A binding whose library does not load: its initializer fails as JOCL's does without libOpenCL. */
public final class FailingBinding {

    static {
        if (true) {
            throw new UnsatisfiedLinkError("Could not initialize native OpenCL library");
        }
    }

    private FailingBinding() {}
}
