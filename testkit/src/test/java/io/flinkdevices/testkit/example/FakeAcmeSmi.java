package io.flinkdevices.testkit.example;

import io.flinkdevices.testkit.fake.DeviceTruth;
import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeExecutable.Response;
import io.flinkdevices.testkit.fake.FakeHost;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * A fake {@code acme-smi} for the example driver's tests: {@code acme-smi --list} prints one line
 * per stick; any other call prints a usage message and exits with code 2, like the real tool. It
 * honours what the contract kit asks of a host: sticks without their optional fields (memory, PCI
 * address, health: older firmware prints only the UUID) and failed sticks.
 */
final class FakeAcmeSmi {

    private FakeAcmeSmi() {}

    /** Installs {@code acme-smi} listing {@code sticks} sticks on {@code host}; returns its path. */
    static Path install(FakeHost host, int sticks) {
        StringBuilder listing = new StringBuilder();
        for (int i = 0; i < sticks; i++) {
            host.declareTruth(i, truth(host, i));
            listing.append(
                            host.optionalFieldsLeftOut()
                                    ? shortLine(i)
                                    : line(i, host.failedDevices().contains(i) ? "failed" : "ok"))
                    .append('\n');
        }
        return host.install(
                        FakeExecutable.named("acme-smi")
                                .whenArguments(List.of("--list"), Response.success(listing.toString()))
                                .exitCode(2)
                                .stderr("usage: acme-smi --list\n"))
                .path();
    }

    /**
     * What stick {@code index} really is, as {@link #line(int, String)} prints it: 16384 MiB, its
     * PCI address; older firmware's short line has neither. The sticks have no NUMA node.
     */
    static DeviceTruth truth(FakeHost host, int index) {
        DeviceTruth t = DeviceTruth.of("uuid", uuid(index)).noNumaNode();
        return host.optionalFieldsLeftOut()
                ? t.without(DeviceTruth.Fact.MEMORY_BYTES).without(DeviceTruth.Fact.PCI_ADDRESS)
                : t.memoryBytes(MEMORY_MIB << 20).pciAddress(pci(index));
    }

    /** What {@code acme-smi --list} prints on a host with {@code sticks} sticks. */
    static String listing(int sticks) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < sticks; i++) {
            sb.append(line(i)).append('\n');
        }
        return sb.toString();
    }

    /** The line of a healthy stick {@code index}. */
    static String line(int index) {
        return line(index, "ok");
    }

    /** The line of stick {@code index} whose health is {@code health} ({@code ok} or {@code failed}). */
    static String line(int index, String health) {
        return String.format(
                Locale.ROOT,
                "Stick %d: Acme Tensor Stick 16G (UUID: %s, memory: %d MiB, pci: %s, health: %s)",
                index,
                uuid(index),
                MEMORY_MIB,
                pci(index),
                health);
    }

    private static final long MEMORY_MIB = 16384;

    private static String pci(int index) {
        return String.format(Locale.ROOT, "0000:%02x:00.0", 0x3b + index);
    }

    /** The line of stick {@code index} as older firmware prints it: no memory, PCI address nor health. */
    static String shortLine(int index) {
        return String.format(Locale.ROOT, "Stick %d: Acme Tensor Stick 16G (UUID: %s)", index, uuid(index));
    }

    /** The UUID of stick {@code index}. */
    static String uuid(int index) {
        return String.format(Locale.ROOT, "ATS-5f9c%04d", index);
    }
}
