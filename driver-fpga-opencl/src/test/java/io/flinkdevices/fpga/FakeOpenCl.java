package io.flinkdevices.fpga;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * OpenCL without OpenCL: fixed platforms and devices, and programs that fail on the devices the
 * test names. Deterministic and thread-safe.
 */
final class FakeOpenCl implements OpenCl {

    private final List<ClPlatform> platforms = new ArrayList<>();
    private final Map<String, String> failingDevices = new ConcurrentHashMap<>();
    private final AtomicInteger programLoads = new AtomicInteger();
    private final Map<String, Boolean> unavailable = new ConcurrentHashMap<>();
    private volatile CountDownLatch answers;

    /** Adds a platform with devices named {@code deviceNames}, all of type {@code type}. */
    synchronized FakeOpenCl platform(String name, long type, String... deviceNames) {
        int p = platforms.size();
        List<ClDevice> devices = new ArrayList<>();
        for (int d = 0; d < deviceNames.length; d++) {
            devices.add(new ClDevice(name, p, d, deviceNames[d], "Fake Vendor", type, (8L << 30) + d, 4 + d, null));
        }
        platforms.add(new ClPlatform(p, name, "Fake Vendor", devices));
        return this;
    }

    /** Programs fail on the device named {@code deviceName}, with {@code reason}. */
    FakeOpenCl programFailsOn(String deviceName, String reason) {
        failingDevices.put(deviceName, reason);
        return this;
    }

    /** The device named {@code deviceName} reports {@code CL_DEVICE_AVAILABLE} {@code available} from now on. */
    FakeOpenCl available(String deviceName, boolean available) {
        if (available) {
            unavailable.remove(deviceName);
        } else {
            unavailable.put(deviceName, true);
        }
        return this;
    }

    /**
     * Discovery, program loads and availability queries block, ignoring interrupts as a call into a runtime stuck in the
     * kernel does, until {@code answers} is counted down.
     */
    FakeOpenCl hangsUntil(CountDownLatch answers) {
        this.answers = answers;
        return this;
    }

    private void hangWhileAsked() {
        CountDownLatch latch = answers;
        while (latch != null && latch.getCount() > 0) {
            try {
                latch.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                // keeps waiting, as a native call does
            }
        }
    }

    /** How often a program was created and built. */
    int programLoads() {
        return programLoads.get();
    }

    @Override
    public String describe() {
        return "fake OpenCL";
    }

    @Override
    public List<ClPlatform> platforms() {
        hangWhileAsked();
        synchronized (this) {
            return List.copyOf(platforms);
        }
    }

    @Override
    public Optional<String> tryProgram(ClDevice device, ProgramFile program) {
        hangWhileAsked();
        programLoads.incrementAndGet();
        return Optional.ofNullable(failingDevices.get(device.name));
    }

    @Override
    public boolean available(ClDevice device) {
        hangWhileAsked();
        return !unavailable.containsKey(device.name);
    }
}
