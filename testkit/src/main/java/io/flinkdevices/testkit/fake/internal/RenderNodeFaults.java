package io.flinkdevices.testkit.fake.internal;

import io.flinkdevices.testkit.fake.DeviceFaults;
import io.flinkdevices.testkit.fake.FakeFileTree;

import java.util.List;

/**
 * {@code FakeAmdHost}'s faults: agent {@code i}'s render node ({@code dri/renderD<128+i>}) vanishes
 * (failed), or its GPU's PCIe link trains down to x{@value #DEGRADED_WIDTH} of x{@value #FULL_WIDTH}
 * (degraded: {@code current_link_width} below {@code max_link_width}); recovery brings both back.
 * A partition shares its GPU's link.
 */
public final class RenderNodeFaults implements DeviceFaults {

    /** The {@code max_link_width} (and healthy {@code current_link_width}) of every fake GPU. */
    public static final int FULL_WIDTH = 16;
    /** The {@code current_link_width} of a degraded GPU. */
    public static final int DEGRADED_WIDTH = 8;

    private final FakeFileTree dev;
    private final FakeFileTree sys;
    private final List<String> gpuOfAgent;

    /**
     * Faults of the render nodes under {@code dev}, the host's device tree, and of the PCI device
     * folders under {@code sys}: {@code gpuOfAgent.get(i)} is agent {@code i}'s GPU folder.
     */
    public RenderNodeFaults(FakeFileTree dev, FakeFileTree sys, List<String> gpuOfAgent) {
        this.dev = dev;
        this.sys = sys;
        this.gpuOfAgent = List.copyOf(gpuOfAgent);
    }

    @Override
    public void inject(int device) {
        dev.remove("dri/renderD" + (128 + device));
    }

    @Override
    public void degrade(int device) {
        sys.file(gpu(device) + "current_link_width", Integer.toString(DEGRADED_WIDTH));
    }

    @Override
    public boolean degrades() {
        return true;
    }

    @Override
    public void recover(int device) {
        dev.file("dri/renderD" + (128 + device), "");
        sys.file(gpu(device) + "current_link_width", Integer.toString(FULL_WIDTH));
    }

    private String gpu(int device) {
        if (device < 0 || device >= gpuOfAgent.size()) {
            throw new IllegalArgumentException("The host has agents 0 to " + (gpuOfAgent.size() - 1) + ", not " + device);
        }
        return gpuOfAgent.get(device);
    }

    @Override
    public String describe() {
        return "the GPU's render node vanishes, or its PCIe link trains down to x" + DEGRADED_WIDTH + " of x" + FULL_WIDTH
                + " (and both come back on recovery)";
    }
}
