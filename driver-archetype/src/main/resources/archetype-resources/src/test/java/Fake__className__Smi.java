package ${package};

import io.flinkdevices.testkit.fake.DeviceFaults;
import io.flinkdevices.testkit.fake.DeviceTruth;
import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeExecutable.Response;
import io.flinkdevices.testkit.fake.FakeHost;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import static io.flinkdevices.testkit.fake.DeviceTruth.Fact.MEMORY_BYTES;
import static io.flinkdevices.testkit.fake.DeviceTruth.Fact.NUMA_NODE;

/**
 * A fake {@code ${deviceName}-smi}: {@code --list} prints one line per device, anything else exits 2.
 * Each device's truth is declared on the host ({@code host.declareTruth}) and its line written from
 * it: memory in MiB, NUMA node (none for device 2), temperature in millidegrees. It honours what the
 * contract kit asks of a host: memory and NUMA node {@code N/A} when {@code
 * host.optionalFieldsLeftOut()}, {@code failed} for the devices in {@code host.failedDevices()},
 * {@code degraded} for those in {@code host.degradedDevices()}, and the faults the kit injects while
 * the driver's monitor watches ({@code host.faults()}): a faulty device lists as {@code failed}, a
 * degraded one as {@code degraded}, until it recovers.
 */
final class Fake${className}Smi {

    private Fake${className}Smi() {}

    /** Installs the tool listing {@code devices} devices on {@code host}; returns its path. */
    static Path install(FakeHost host, int devices) {
        FakeExecutable tool = host.install(FakeExecutable.named("${deviceName}-smi")
                .whenArguments(List.of("--list"), Response.success(listing(host, devices, Set.of(), Set.of())))
                .exitCode(2)
                .stderr("usage: ${deviceName}-smi --list\n"));
        host.faults(DeviceFaults.tracking("${deviceName}-smi --list reports the device failed or degraded",
                (failed, degraded) -> tool.changeResponse(List.of("--list"), r -> r.withStdout(listing(host, devices, failed, degraded)))));
        return tool.path();
    }

    private static String listing(FakeHost host, int devices, Set<Integer> faulty, Set<Integer> degraded) {
        StringBuilder listing = new StringBuilder();
        for (int i = 0; i < devices; i++) {
            // what device i really is (16 GiB, NUMA node i % 2 but none for device 2, 40 C and up); its line is written from it
            DeviceTruth t = DeviceTruth.of("uuid", uuid(i)).temperatureCelsius(40 + i);
            t = host.optionalFieldsLeftOut() ? t.noNumaNode().without(MEMORY_BYTES) : (i == 2 ? t.noNumaNode() : t.numaNode(i % 2)).memoryBytes(16384L << 20);
            host.declareTruth(i, t);
            boolean failed = host.failedDevices().contains(i) || faulty.contains(i);
            boolean worn = host.degradedDevices().contains(i) || degraded.contains(i);
            listing.append(i).append(',').append(uuid(i)).append(",Example ${className} 16G,")
                    .append(t.memoryBytes().isPresent() ? t.memoryBytes().getAsLong() >> 20 : "N/A").append(',').append(t.value(NUMA_NODE).orElse("N/A"))
                    .append(',').append(Math.round(t.temperatureCelsius().getAsDouble() * 1000))
                    .append(failed ? ",failed\n" : worn ? ",degraded\n" : ",ok\n");
        }
        return listing.toString();
    }

    static String uuid(int index) {
        return "${deviceName}-" + (1000 + index);
    }
}
