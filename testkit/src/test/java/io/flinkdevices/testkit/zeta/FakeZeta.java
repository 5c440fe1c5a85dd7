package io.flinkdevices.testkit.zeta;

import io.flinkdevices.testkit.fake.DeviceTruth;
import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeExecutable.Response;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;

import java.nio.file.Path;
import java.util.List;

/**
 * The Zeta NPU host, both ways the driver reads it: {@code zeta-smi --list} and {@code
 * sys/class/zeta/zeta<N>/}. Memory and NUMA node are left out when the host asks for it, and a
 * device in {@code host.failedDevices()} says {@code failed}. Each device's truth is declared on
 * the host first and written from there (MiB in the listing and in {@code mem_mib}).
 */
final class FakeZeta {

    private FakeZeta() {}

    /** Installs {@code zeta-smi} listing {@code devices} NPUs; returns its path. */
    static Path installTool(FakeHost host, int devices) {
        StringBuilder listing = new StringBuilder();
        for (int i = 0; i < devices; i++) {
            DeviceTruth t = declare(host, i);
            listing.append(i).append(',').append(uuid(i)).append(",Zeta N1,")
                    .append(t.memoryBytes().isPresent() ? (t.memoryBytes().getAsLong() >> 20) + "," : "N/A,")
                    .append(t.numaNode().isPresent() ? t.numaNode().getAsInt() + "," : "N/A,")
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
            DeviceTruth t = declare(host, i);
            t.memoryBytes().ifPresent(b -> sys.file(dir + "mem_mib", Long.toString(b >> 20)));
            t.numaNode().ifPresent(n -> sys.file(dir + "numa_node", Integer.toString(n)));
        }
        return sys.root();
    }

    /** Declares device {@code index}'s truth on {@code host}: 32 GiB on NUMA node index % 2, both absent on a sparse host. */
    private static DeviceTruth declare(FakeHost host, int index) {
        DeviceTruth t = DeviceTruth.of("uuid", uuid(index));
        t = host.optionalFieldsLeftOut()
                ? t.without(DeviceTruth.Fact.MEMORY_BYTES).noNumaNode()
                : t.memoryBytes(32768L << 20).numaNode(index % 2);
        host.declareTruth(index, t);
        return t;
    }

    static String uuid(int index) {
        return "zeta-" + (7000 + index);
    }

    private static String health(FakeHost host, int index) {
        return host.failedDevices().contains(index) ? "failed" : "ok";
    }
}
