package ${package};

import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeExecutable.Response;
import io.flinkdevices.testkit.fake.FakeHost;

import java.nio.file.Path;
import java.util.List;

/**
 * A fake {@code ${deviceName}-smi}: {@code --list} prints one line per device, anything else exits 2.
 * It honours what the contract kit asks of a host: memory and NUMA node {@code N/A} when {@code
 * host.optionalFieldsLeftOut()}, {@code failed} for the devices in {@code host.failedDevices()}.
 */
final class Fake${className}Smi {

    private Fake${className}Smi() {}

    /** Installs the tool listing {@code devices} devices on {@code host}; returns its path. */
    static Path install(FakeHost host, int devices) {
        StringBuilder listing = new StringBuilder();
        for (int i = 0; i < devices; i++) {
            String optional = host.optionalFieldsLeftOut() ? "N/A,N/A" : "16384," + (i % 2);
            listing.append(i).append(',').append(uuid(i)).append(",Example ${className} 16G,").append(optional)
                    .append(host.failedDevices().contains(i) ? ",failed\n" : ",ok\n");
        }
        return host.install(FakeExecutable.named("${deviceName}-smi")
                        .whenArguments(List.of("--list"), Response.success(listing.toString()))
                        .exitCode(2)
                        .stderr("usage: ${deviceName}-smi --list\n"))
                .path();
    }

    static String uuid(int index) {
        return "${deviceName}-" + (1000 + index);
    }
}
