package io.flinkdevices.testkit.example;

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
                "Stick %d: Acme Tensor Stick 16G (UUID: %s, memory: 16384 MiB, pci: 0000:%02x:00.0, health: %s)",
                index,
                uuid(index),
                0x3b + index,
                health);
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
