package io.flinkdevices.rdma;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.config.DriverConfigException;
import io.flinkdevices.sdk.host.Sysfs;
import io.flinkdevices.testkit.contract.BadInputTable;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The bad-input table of the RDMA driver: every bad key, value and sysfs tree ends in one clear
 * error naming the key or path and what was expected.
 */
@DisplayName("The RDMA driver's bad-input table")
@ExtendWith(StopDeviceMonitors.class)
class RdmaBadInputTest {

    private static final String P = "external-resource.rdma.param.";
    private static final String AMOUNT = "external-resource.rdma.amount";

    @TempDir Path temp;
    private int hosts;

    private static void attempt(Map<String, String> params, long amount) throws Exception {
        Configuration full = new Configuration();
        params.forEach((k, v) -> full.setString(P + k, v));
        new RdmaDriverFactory().createExternalResourceDriver(new DelegatingConfiguration(full, P)).retrieveResourceInfo(amount);
    }

    private static Map<String, String> params(FakeFileTree sys, String... kv) {
        Map<String, String> p = new HashMap<>();
        p.put("sysfs.root", sys.root().toString());
        for (int i = 0; i < kv.length; i += 2) {
            p.put(kv[i], kv[i + 1]);
        }
        return p;
    }

    private FakeFileTree ib() {
        return FakeRdmaHost.builder().infiniband("mlx5_0", 200, true, false).installOn(FakeHost.create(temp.resolve("host" + hosts++)));
    }

    /** An InfiniBand host whose mlx5_0 port 1 has {@code content} in {@code file}. */
    private FakeFileTree withPortFile(String file, String content) {
        FakeFileTree sys = ib();
        sys.file("class/infiniband/mlx5_0/ports/1/" + file, content);
        return sys;
    }

    /** An InfiniBand host whose mlx5_0 port 1 counter {@code counter} reads {@code content}. */
    private FakeFileTree withCounter(String counter, String content) {
        return withPortFile("counters/" + counter, content);
    }

    /**
     * A monitor sample of mlx5_0/1, as the driver's monitor takes it: a bad number must be thrown
     * (a failed sample the monitor counts), not turned into a metric or a failed port.
     */
    private static void sample(FakeFileTree sys) throws Exception {
        new PortSampler(Sysfs.at(sys.root(), P + "sysfs.root")).sample(List.of("mlx5_0/1"));
    }

    /** An InfiniBand host whose {@code rel} is a FIFO: reading it would wait for a writer. */
    private FakeFileTree withFifo(String rel) throws Exception {
        FakeFileTree sys = ib();
        sys.remove(rel);
        Process mkfifo = new ProcessBuilder("mkfifo", sys.path(rel).toString()).start();
        if (mkfifo.waitFor() != 0) {
            throw new IllegalStateException("mkfifo " + sys.path(rel) + " failed");
        }
        return sys;
    }

    @Test
    @DisplayName("every bad input gives one clear error: N tried, N clear error, 0 other")
    void table() throws Exception {
        FakeFileTree good = ib();
        FakeFileTree garbageState = ib();
        garbageState.file("class/infiniband/mlx5_0/ports/1/state", "ACTIVE");
        FakeFileTree truncatedGid = ib();
        truncatedGid.file("class/infiniband/mlx5_0/ports/1/gids/0", "fe80:0000:0000");
        FakeFileTree noLinkLayer = ib();
        noLinkLayer.remove("class/infiniband/mlx5_0/ports/1/link_layer");
        FakeFileTree noState = ib();
        noState.remove("class/infiniband/mlx5_0/ports/1/state");
        FakeFileTree noPorts = ib();
        noPorts.remove("class/infiniband/mlx5_0/ports");
        Path missing = temp.resolve("no-sys");
        FakeFileTree nanRate = withPortFile("rate", "NaN Gb/sec (4X HDR)");
        FakeFileTree infiniteRate = withPortFile("rate", "Infinity Gb/sec (4X HDR)");
        FakeFileTree negativeRate = withPortFile("rate", "-200 Gb/sec (4X HDR)");
        FakeFileTree wordRate = withPortFile("rate", "fast");
        FakeFileTree hugeNuma = ib();
        hugeNuma.file("devices/pci0000:00/" + FakeRdmaHost.pciAddress(0) + "/numa_node", "99999999999");
        FakeFileTree badLinkLayer = ib();
        Files.write(badLinkLayer.path("class/infiniband/mlx5_0/ports/1/link_layer"), new byte[] {'I', 'n', (byte) 0xff, 'B', 'a', 'n', 'd', '\n'});
        FakeFileTree fifoState = withFifo("class/infiniband/mlx5_0/ports/1/state");
        FakeFileTree fifoGidType = withFifo("class/infiniband/mlx5_0/ports/1/gid_attrs/types/0");
        FakeFileTree classLoop = ib();
        classLoop.remove("class/infiniband");
        classLoop.symlink("class/infiniband", "infiniband");

        BadInputTable.Result result =
                BadInputTable.forDriver("rdma")
                        .row("unknown key", () -> attempt(params(good, "device.patern", "mlx5_.*"), 1),
                                P + "device.patern", "unknown parameter", "did you mean " + P + "device.pattern")
                        .row("bad device.pattern", () -> attempt(params(good, "device.pattern", "mlx5_("), 1),
                                P + "device.pattern", "expected a Java regular expression", "'mlx5_('")
                        .row("bad link-layer", () -> attempt(params(good, "link-layer", "fibre"), 1),
                                P + "link-layer", "expected one of any, infiniband, ethernet", "'fibre'")
                        .row("bad min-rate", () -> attempt(params(good, "min-rate", "fast"), 1),
                                P + "min-rate", "'fast'")
                        .row("bad gid.type", () -> attempt(params(good, "gid.type", "v3"), 1),
                                P + "gid.type", "expected one of auto, roce-v2, roce-v1", "'v3'")
                        .row("bad PCI id", () -> attempt(params(good, "pci.vendor-ids", "mellanox"), 1),
                                P + "pci.vendor-ids", "expected PCI ids of four hex digits", "'mellanox'")
                        .row("bad sharing", () -> attempt(params(good, "sharing", "sometimes"), 1),
                                P + "sharing", "expected one of exclusive, shared", "'sometimes'")
                        .row("shared with coordination", () -> attempt(params(good, "sharing", "shared", "coordination.enabled", "true"), 1),
                                P + "sharing", "nothing to coordinate")
                        .row("relative sysfs.root", () -> attempt(params(good, "sysfs.root", "sys"), 1),
                                P + "sysfs.root", "expected an absolute path", "'sys'")
                        .row("bad Kubernetes resource name", () -> attempt(params(good, "kubernetes.resource-name", "rdma hca"), 1),
                                P + "kubernetes.resource-name", "'rdma hca'")
                        .row("sysfs root missing", () -> attempt(params(good, "sysfs.root", missing.toString()), 1),
                                missing + "/class/infiniband does not exist", "expected the RDMA devices")
                        .row("garbage port state", () -> attempt(params(garbageState), 1),
                                "ports/1/state is 'ACTIVE'", "expected '<number>: <name>'")
                        .row("truncated GID", () -> attempt(params(truncatedGid), 1),
                                "ports/1/gids/0 is 'fe80:0000:0000'", "expected a GID of eight groups")
                        .row("port without link_layer (the NIC is half there: left out)", () -> attempt(params(noLinkLayer), 1),
                                P + "sysfs.root", "ports/1/link_layer does not exist", "expected a sysfs attribute",
                                "left out while they vanished or were half there", "mlx5_0 (half there")
                        .row("port state gone while the NIC's folder stays (driver reload)", () -> attempt(params(noState), 1),
                                AMOUNT, "has 0 that are healthy", "left out while they vanished or were half there (a driver reload or hot removal?)",
                                "ports/1/state does not exist")
                        .row("ports folder gone while the NIC's folder stays (hot removal)", () -> attempt(params(noPorts), 1),
                                AMOUNT, "left out while they vanished or were half there", "cannot list", "mlx5_0/ports: No such file or directory")
                        .row("monitor: counter negative", () -> sample(withCounter("port_rcv_data", "-5")),
                                "counters/port_rcv_data of port mlx5_0/1 is '-5'", "expected a whole number from 0 to 9223372036854775807")
                        .row("monitor: counter over 64 bits", () -> sample(withCounter("port_xmit_data", "99999999999999999999")),
                                "counters/port_xmit_data of port mlx5_0/1 is '99999999999999999999'", "expected a whole number from 0")
                        .row("monitor: counter all ones (u64 unknown)", () -> sample(withCounter("symbol_error", "18446744073709551615")),
                                "counters/symbol_error of port mlx5_0/1 is '18446744073709551615'", "expected a whole number from 0")
                        .row("monitor: counter NaN", () -> sample(withCounter("link_downed", "NaN")),
                                "counters/link_downed of port mlx5_0/1 is 'NaN'", "expected a whole number from 0")
                        .row("monitor: state number garbage", () -> sample(withPortFile("state", "-1: ACTIVE")),
                                "ports/1/state of port mlx5_0/1 is '-1'", "expected a number from 0 to 255")
                        .row("no port matching the selectors", () -> attempt(params(good, "link-layer", "ethernet"), 1),
                                AMOUNT, "has 0 that are healthy and match the selectors",
                                "mlx5_0/1 (InfiniBand, ACTIVE/LinkUp, 200 Gb/s): link layer InfiniBand, not ethernet",
                                "mlx5_0/2 (InfiniBand, DOWN/Disabled, 200 Gb/s): link layer InfiniBand")
                        .row("fewer healthy ports than amount", () -> attempt(params(good), 2),
                                AMOUNT, "Asked for 2 RDMA ports", "has 1 that are healthy", "port is DOWN/Disabled, not ACTIVE/LinkUp",
                                "Lower " + AMOUNT + " to 1")
                        .row("rate NaN", () -> attempt(params(nanRate, "min-rate", "400"), 1),
                                "ports/1/rate is 'NaN Gb/sec (4X HDR)'", "expected '<Gb/s> Gb/sec (<width> <speed>)'")
                        .row("rate Infinity", () -> attempt(params(infiniteRate, "min-rate", "400"), 1),
                                "ports/1/rate is 'Infinity Gb/sec (4X HDR)'", "expected '<Gb/s> Gb/sec")
                        .row("rate negative", () -> attempt(params(negativeRate, "min-rate", "400"), 1),
                                "ports/1/rate is '-200 Gb/sec (4X HDR)'", "expected '<Gb/s> Gb/sec")
                        .row("rate a word", () -> attempt(params(wordRate, "min-rate", "400"), 1),
                                "ports/1/rate is 'fast'", "expected '<Gb/s> Gb/sec")
                        .row("numa_node beyond an int", () -> attempt(params(hugeNuma), 1),
                                P + "sysfs.root", "numa_node is '99999999999'", "expected a whole number from -1 to 2147483647")
                        .row("link_layer not UTF-8", () -> attempt(params(badLinkLayer), 1),
                                "ports/1/link_layer is 'In\uFFFDBand'", "expected one of InfiniBand, Ethernet, Unknown")
                        .row("netdevs without a name", () -> attempt(params(good, "netdevs", ",,"), 1),
                                P + "netdevs", "is set but lists nothing (got ',,')", "expected interface names")
                        .row("netdevs with a blank in a name", () -> attempt(params(good, "netdevs", "ens1f0,my nic"), 1),
                                P + "netdevs", "expected interface names", "'my nic'")
                        .row("class/infiniband a symbolic link loop", () -> attempt(params(classLoop), 1),
                                "class/infiniband cannot be opened (Too many levels of symbolic links", "a symbolic link loop)",
                                "expected the RDMA devices")
                        .row("port state a FIFO", () -> attempt(params(fifoState), 1),
                                P + "sysfs.root", "ports/1/state is not a regular file but a FIFO (named pipe)",
                                "expected a sysfs attribute")
                        .row("GID type a FIFO", () -> attempt(params(fifoGidType), 1),
                                P + "sysfs.root", "ports/1/gid_attrs/types/0 is not a regular file but a FIFO (named pipe)",
                                "expected a sysfs attribute")
                        .row("amount 0", () -> attempt(params(good), 0),
                                AMOUNT, "must be at least 1 but is 0")
                        .row("bad monitor.interval", () -> attempt(params(good, "monitor.interval", "often"), 1),
                                P + "monitor.interval", "expected 0 (monitoring off) or a duration from 100 ms to 1 d", "'often'")
                        .row("monitor.interval over 1 d", () -> attempt(params(good, "monitor.interval", "2 d"), 1),
                                P + "monitor.interval", "expected 0 (monitoring off) or a duration from 100 ms to 1 d", "'2 d'")
                        .row("bad health.action", () -> attempt(params(good, "health.action", "quarantine"), 1),
                                P + "health.action", "expected one of report, fail-tasks, stop-taskmanager", "'quarantine'")
                        .row("bad health.recover-after", () -> attempt(params(good, "health.recover-after", "soon"), 1),
                                P + "health.recover-after", "expected 0 (back at the first healthy sample) or a duration up to 1 d", "'soon'")
                        .row("health.recover-after over 1 d", () -> attempt(params(good, "health.recover-after", "7 d"), 1),
                                P + "health.recover-after", "expected 0 (back at the first healthy sample) or a duration up to 1 d", "'7 d'")
                        .row("verbs-probe.timeout too long to count", () -> attempt(params(good, "verbs-probe.timeout", "99999999 d"), 1),
                                P + "verbs-probe.timeout", "expected a duration from 1 ms to 1 d", "'99999999 d'")
                        .row("coordination.lock-timeout too long to count", () -> attempt(params(good, "coordination.lock-timeout", "99999999 d"), 1),
                                P + "coordination.lock-timeout", "expected a duration from 1 ms to 1 d", "'99999999 d'")
                        .run();

        result.assertAllClear();
    }

    @Test
    @DisplayName("the factory refuses durations that would overflow at retrieval, each with its full key, value and range")
    void overflowingDurations() {
        Configuration full = new Configuration();
        params(ib(), "verbs-probe.timeout", "99999999 d", "coordination.lock-timeout", "99999999999999999 d")
                .forEach((k, v) -> full.setString(P + k, v));

        assertThatThrownBy(() -> new RdmaDriverFactory().createExternalResourceDriver(new DelegatingConfiguration(full, P)))
                .isInstanceOf(DriverConfigException.class)
                .hasMessageContaining(P + "verbs-probe.timeout: expected a duration from 1 ms to 1 d but got '99999999 d'")
                .hasMessageContaining(
                        P + "coordination.lock-timeout: expected a duration from 1 ms to 1 d but got '99999999999999999 d'");
    }
}
