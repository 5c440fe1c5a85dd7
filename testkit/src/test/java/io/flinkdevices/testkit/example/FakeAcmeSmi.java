package io.flinkdevices.testkit.example;

import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeExecutable.Response;
import io.flinkdevices.testkit.fake.FakeHost;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * A fake {@code acme-smi} for the example driver's tests: {@code acme-smi --list} prints one line
 * per stick; any other call prints a usage message and exits with code 2, like the real tool.
 */
final class FakeAcmeSmi {

    private FakeAcmeSmi() {}

    /** Installs {@code acme-smi} listing {@code sticks} sticks on {@code host}; returns its path. */
    static Path install(FakeHost host, int sticks) {
        return host.install(
                        FakeExecutable.named("acme-smi")
                                .whenArguments(List.of("--list"), Response.success(listing(sticks)))
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

    /** The line of stick {@code index}. */
    static String line(int index) {
        return String.format(
                Locale.ROOT,
                "Stick %d: Acme Tensor Stick 16G (UUID: %s, memory: 16384 MiB, pci: 0000:%02x:00.0)",
                index,
                uuid(index),
                0x3b + index);
    }

    /** The UUID of stick {@code index}. */
    static String uuid(int index) {
        return String.format(Locale.ROOT, "ATS-5f9c%04d", index);
    }
}
