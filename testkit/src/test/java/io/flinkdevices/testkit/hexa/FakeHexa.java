package io.flinkdevices.testkit.hexa;

import io.flinkdevices.testkit.fake.DeviceFaults;
import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeExecutable.Response;
import io.flinkdevices.testkit.fake.FakeHost;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A fake {@code hexa-smi}: {@code --json} prints a JSON array with one object per card, anything
 * else exits 2. Each card has values of its own (so that a driver pairing values with the wrong
 * card shows it): 32 GiB, {@code 41 + index} °C, {@code 10 * index} % busy, NUMA node {@code index %
 * 2}, PCI bus {@code 0x3b + index}. It honours what the contract kit asks of a host: no {@code
 * numa_node} field when {@code host.optionalFieldsLeftOut()}, {@code failed} for the cards in
 * {@code host.failedDevices()}, {@code degraded} for those in {@code host.degradedDevices()}, and
 * the faults the kit injects while the driver's monitor watches.
 */
final class FakeHexa {

    static final long MEMORY_BYTES = 32L << 30;

    private FakeHexa() {}

    /** Installs {@code hexa-smi} listing {@code devices} cards on {@code host}; returns its path. */
    static Path install(FakeHost host, int devices) {
        FakeExecutable tool = host.install(FakeExecutable.named("hexa-smi")
                .whenArguments(List.of("--json"), Response.success(json(host, devices, Set.of(), Set.of())))
                .exitCode(2)
                .stderr("usage: hexa-smi --json\n"));
        host.faults(DeviceFaults.tracking("hexa-smi --json reports the card failed or degraded",
                (failed, degraded) -> tool.changeResponse(List.of("--json"), r -> r.withStdout(json(host, devices, failed, degraded)))));
        return tool.path();
    }

    private static String json(FakeHost host, int devices, Set<Integer> failed, Set<Integer> degraded) {
        StringBuilder out = new StringBuilder("[\n");
        for (int i = 0; i < devices; i++) {
            String health = host.failedDevices().contains(i) || failed.contains(i) ? "failed"
                    : host.degradedDevices().contains(i) || degraded.contains(i) ? "degraded" : "ok";
            out.append(String.format(Locale.ROOT, "  {\"index\": %d, \"uuid\": \"%s\", \"name\": \"Hexa H6 32G\", \"memory\": %d,"
                            + " \"temperature\": %d, \"utilization\": %d,%s \"pci\": \"0000:%02x:00.0\", \"health\": \"%s\"}%s%n",
                    i, uuid(i), MEMORY_BYTES, temperature(i), 10 * i % 100,
                    host.optionalFieldsLeftOut() ? "" : " \"numa_node\": " + (i % 2) + ",", 0x3b + i, health,
                    i + 1 < devices ? "," : ""));
        }
        return out.append("]\n").toString();
    }

    static String uuid(int index) {
        return "HEXA-6a1e-" + (4000 + index);
    }

    static int temperature(int index) {
        return 41 + index;
    }
}
