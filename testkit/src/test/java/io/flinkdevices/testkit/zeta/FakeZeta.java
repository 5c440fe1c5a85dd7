package io.flinkdevices.testkit.zeta;

import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeExecutable.Response;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;

import java.nio.file.Path;
import java.util.List;

/**
 * The Zeta NPU host, both ways the driver reads it: {@code zeta-smi --list} and {@code
 * sys/class/zeta/zeta<N>/}. Memory and NUMA node are left out when the host asks for it, and a
 * device in {@code host.failedDevices()} says {@code failed}.
 */
final class FakeZeta {

    private FakeZeta() {}

    /** Installs {@code zeta-smi} listing {@code devices} NPUs; returns its path. */
    static Path installTool(FakeHost host, int devices) {
        StringBuilder listing = new StringBuilder();
        for (int i = 0; i < devices; i++) {
            listing.append(i).append(',').append(uuid(i)).append(",Zeta N1,")
                    .append(host.optionalFieldsLeftOut() ? "N/A,N/A," : "32768," + (i % 2) + ",")
                    .append(health(host, i)).append('\n');
        }
        return host.install(FakeExecutable.named("zeta-smi")
                        .whenArguments(List.of("--list"), Response.success(listing.toString()))
                        .exitCode(2)
                        .stderr("usage: zeta-smi --list\n"))
                .path();
    }

    /** Writes {@code devices} NPUs into the host's {@code sys/}; returns the sysfs root. */
    static Path installSysfs(FakeHost host, int devices) {
        FakeFileTree sys = host.sys();
        sys.dir("class/zeta");
        for (int i = 0; i < devices; i++) {
            String dir = "class/zeta/zeta" + i + "/";
            sys.file(dir + "uuid", uuid(i));
            sys.file(dir + "name", "Zeta N1");
            sys.file(dir + "health", health(host, i));
            if (!host.optionalFieldsLeftOut()) {
                sys.file(dir + "mem_mib", "32768");
                sys.file(dir + "numa_node", Integer.toString(i % 2));
            }
        }
        return sys.root();
    }

    static String uuid(int index) {
        return "zeta-" + (7000 + index);
    }

    private static String health(FakeHost host, int index) {
        return host.failedDevices().contains(index) ? "failed" : "ok";
    }
}
