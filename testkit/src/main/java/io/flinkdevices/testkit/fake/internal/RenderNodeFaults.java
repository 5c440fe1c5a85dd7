package io.flinkdevices.testkit.fake.internal;

import io.flinkdevices.testkit.fake.DeviceFaults;
import io.flinkdevices.testkit.fake.FakeFileTree;

/** {@code FakeAmdHost}'s faults: agent {@code i}'s render node ({@code dri/renderD<128+i>}) vanishes, and comes back. */
public final class RenderNodeFaults implements DeviceFaults {

    private final FakeFileTree dev;

    /** Faults of the render nodes under {@code dev}, the host's device tree. */
    public RenderNodeFaults(FakeFileTree dev) {
        this.dev = dev;
    }

    @Override
    public void inject(int device) {
        dev.remove("dri/renderD" + (128 + device));
    }

    @Override
    public void recover(int device) {
        dev.file("dri/renderD" + (128 + device), "");
    }

    @Override
    public String describe() {
        return "the GPU's render node vanishes (and comes back on recovery)";
    }
}
