package io.flinkdevices.testkit.hexa;

import io.flinkdevices.testkit.fake.DeviceFaults;
import io.flinkdevices.testkit.fake.DeviceTruth;
import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeExecutable.Response;
import io.flinkdevices.testkit.fake.FakeHost;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A fake {@code hexa-smi}: {@code --json} prints a JSON array with one object per card, anything
 * else exits 2. Each card's true values are declared on the host ({@link DeviceTruth}) and the JSON
 * is written from them, each card with values of its own (so that a driver pairing values with the
 * wrong card shows it): 32 GiB in bytes, {@code 41 + index} °C, {@code 10 * index} % busy, NUMA
 * node {@code index % 2}, PCI bus {@code 0x3b + index}. It honours what the contract kit asks of a host: no {@code
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
            DeviceTruth t = declare(host, i);
            String health = host.failedDevices().contains(i) || failed.contains(i) ? "failed"
                    : host.degradedDevices().contains(i) || degraded.contains(i) ? "degraded" : "ok";
            out.append(String.format(Locale.ROOT, "  {\"index\": %d, \"uuid\": \"%s\", \"name\": \"Hexa H6 32G\", \"memory\": %d,"
                            + " \"temperature\": %.0f, \"utilization\": %.0f,%s \"pci\": \"%s\", \"health\": \"%s\"}%s%n",
                    i, uuid(i), t.memoryBytes().getAsLong(), t.temperatureCelsius().getAsDouble(), t.utilizationPercent().getAsDouble(),
                    t.numaNode().isPresent() ? " \"numa_node\": " + t.numaNode().getAsInt() + "," : "", t.pciAddress().orElseThrow(),
                    health, i + 1 < devices ? "," : ""));
        }
        return out.append("]\n").toString();
    }

    /** Declares card {@code index}'s true values on {@code host}; the tool's JSON is written from them. */
    private static DeviceTruth declare(FakeHost host, int index) {
        DeviceTruth t = DeviceTruth.of("uuid", uuid(index)).memoryBytes(MEMORY_BYTES).temperatureCelsius(41 + index)
                .utilizationPercent(10 * index % 100).pciAddress(String.format(Locale.ROOT, "0000:%02x:00.0", 0x3b + index));
        t = host.optionalFieldsLeftOut() ? t.noNumaNode() : t.numaNode(index % 2);
        host.declareTruth(index, t);
        return t;
    }

    static String uuid(int index) {
        return "HEXA-6a1e-" + (4000 + index);
    }
}
