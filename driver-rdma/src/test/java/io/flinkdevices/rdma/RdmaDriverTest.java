package io.flinkdevices.rdma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.info.RdmaInfo;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;
import io.flinkdevices.testkit.logging.LogCapture;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.configuration.Configuration;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

/** What the RDMA driver hands out on fake InfiniBand and RoCE hosts. */
@ExtendWith(StopDeviceMonitors.class)
class RdmaDriverTest {

    @TempDir Path temp;
    private int hosts;

    private FakeFileTree host(FakeRdmaHost.Builder b) {
        return b.installOn(FakeHost.create(temp.resolve("host" + hosts++)));
    }

    private static ExternalResourceDriver driver(FakeFileTree sys, String... kv) throws Exception {
        Configuration c = new Configuration();
        c.setString("sysfs.root", sys.root().toString());
        for (int i = 0; i < kv.length; i += 2) {
            c.setString(kv[i], kv[i + 1]);
        }
        return new RdmaDriverFactory().createExternalResourceDriver(c);
    }

    private static List<RdmaInfo> get(ExternalResourceDriver d, long amount) throws Exception {
        return d.retrieveResourceInfo(amount).stream().map(RdmaInfo::from).collect(Collectors.toList());
    }

    @Test
    @DisplayName("InfiniBand: healthy ports with every field; a port that is down is never offered, and the error says why")
    void infiniband() throws Exception {
        FakeFileTree sys = host(FakeRdmaHost.builder().infiniband("mlx5_0", 200, true, false).infiniband("mlx5_1", 100, true));
        List<RdmaInfo> ports = get(driver(sys), 2);

        assertThat(ports).extracting(p -> p.getDevice() + "/" + p.getPort()).containsExactly("mlx5_0/1", "mlx5_1/1");
        RdmaInfo p = ports.get(0);
        assertThat(p.getLinkLayer()).contains("InfiniBand");
        assertThat(p.getState()).contains("ACTIVE");
        assertThat(p.getGid()).contains(FakeRdmaHost.linkLocalGid(0));
        assertThat(p.getGidIndex()).hasValue(0);
        assertThat(p.getNodeGuid()).contains(FakeRdmaHost.nodeGuid(0));
        assertThat(p.getPciAddress()).contains(FakeRdmaHost.pciAddress(0));
        assertThat(p.getNumaNode()).hasValue(0);
        assertThat(p.getRateGbps()).hasValue(200);
        assertThat(p.getNetdev()).isEmpty();

        assertThatThrownBy(() -> get(driver(sys), 3))
                .hasMessageContaining("Asked for 3 RDMA ports (external-resource")
                .hasMessageContaining("has 2 that are healthy and match the selectors [mlx5_0/1, mlx5_1/1]")
                .hasMessageContaining("mlx5_0/2 (InfiniBand, DOWN/Disabled, 200 Gb/s): port is DOWN/Disabled, not ACTIVE/LinkUp");
    }

    @Test
    @DisplayName("a port ACTIVE in LinkErrorRecovery (degraded) is offered after every healthy port, and handed out when nothing better is left")
    void degradedPortComesLast() throws Exception {
        FakeFileTree sys = host(FakeRdmaHost.builder().infiniband("mlx5_0", 200, true, true, true));
        FakeRdmaHost.portDegraded(sys, "mlx5_0", 1);

        assertThat(get(driver(sys), 2)).extracting(p -> p.getDevice() + "/" + p.getPort()).containsExactly("mlx5_0/2", "mlx5_0/3");
        assertThat(get(driver(sys), 3)).extracting(p -> p.getDevice() + "/" + p.getPort())
                .containsExactly("mlx5_0/2", "mlx5_0/3", "mlx5_0/1");
    }

    @Test
    @DisplayName("RoCE: the IPv4-mapped RoCE v2 GID is chosen over link-local and v1; gid.type roce-v1 picks v1; netdev reported")
    void roceGidChoice() throws Exception {
        FakeFileTree sys = host(FakeRdmaHost.builder().roce("mlx5_bond_0", "bond0", "10.1.2.3", 100));
        RdmaInfo v2 = get(driver(sys), 1).get(0);
        assertThat(v2.getGid()).contains(FakeRdmaHost.ipv4Gid("10.1.2.3"));
        assertThat(v2.getGidType()).contains("RoCE v2");
        assertThat(v2.getGidIndex()).hasValue(3);
        assertThat(v2.getNetdev()).contains("bond0");
        assertThat(v2.getLinkLayer()).contains("Ethernet");

        RdmaInfo v1 = get(driver(sys, "gid.type", "roce-v1"), 1).get(0);
        assertThat(v1.getGidIndex()).hasValue(2);
        assertThat(v1.getGidType()).contains("IB/RoCE v1");
    }

    @Test
    @DisplayName("a GID table with holes (removed addresses): a GID after a hole is found; the table is read up to 8 unused entries in a row")
    void gidTableWithHoles() throws Exception {
        FakeFileTree sys = host(FakeRdmaHost.builder().roce("mlx5_bond_0", "bond0", "10.1.2.3", 100));
        String port = "class/infiniband/mlx5_bond_0/ports/1/";
        String zero = "0000:0000:0000:0000:0000:0000:0000:0000";
        // the IPv4 RoCE v2 GID moves from index 3 to 9, behind six unused entries
        String v4 = sys.read(port + "gids/3");
        for (int i = 2; i <= 8; i++) {
            sys.file(port + "gids/" + i, zero);
        }
        sys.file(port + "gids/9", v4).file(port + "gid_attrs/types/9", "RoCE v2").file(port + "gid_attrs/ndevs/9", "bond0");
        assertThat(get(driver(sys), 1).get(0).getGidIndex()).hasValue(9);

        // behind eight unused entries it is not read: the link-local RoCE v2 GID is chosen instead
        sys.file(port + "gids/9", zero).file(port + "gids/10", v4)
                .file(port + "gid_attrs/types/10", "RoCE v2").file(port + "gid_attrs/ndevs/10", "bond0");
        assertThat(get(driver(sys), 1).get(0).getGidIndex()).hasValue(1);

        // a table of 40 entries with used ones spread beyond the first read-ahead window: a chain of
        // runs shorter than eight leads to the IPv4 RoCE v2 GID at 21
        String linkLocal = sys.read(port + "gids/0");
        for (int i = 2; i < 40; i++) {
            sys.file(port + "gids/" + i, zero);
        }
        for (int i : new int[] {7, 14}) {
            sys.file(port + "gids/" + i, linkLocal).file(port + "gid_attrs/types/" + i, "IB/RoCE v1")
                    .file(port + "gid_attrs/ndevs/" + i, "bond0");
        }
        sys.file(port + "gids/21", v4).file(port + "gid_attrs/types/21", "RoCE v2").file(port + "gid_attrs/ndevs/21", "bond0");
        assertThat(get(driver(sys), 1).get(0).getGidIndex()).hasValue(21);
    }

    @Test
    @DisplayName("RoCE with netdevs: the GID is chosen among the listed interfaces, not a better one on a VLAN of the same port")
    void gidOnListedNetdev() throws Exception {
        FakeFileTree sys = host(FakeRdmaHost.builder().roce("mlx5_bond_0", "bond0", "10.1.2.3", 100));
        String port = "class/infiniband/mlx5_bond_0/ports/1/";
        // the IPv4 GIDs (2: v1, 3: v2) belong to VLAN 100 on bond0; bond0 keeps its link-local ones
        sys.file(port + "gid_attrs/ndevs/2", "bond0.100").file(port + "gid_attrs/ndevs/3", "bond0.100");

        RdmaInfo onBond = get(driver(sys, "netdevs", "bond0"), 1).get(0);
        assertThat(onBond.getNetdev()).contains("bond0");
        assertThat(onBond.getGidIndex()).hasValue(1);
        assertThat(onBond.getGidType()).contains("RoCE v2");
        RdmaInfo onVlan = get(driver(sys, "netdevs", "bond0.100"), 1).get(0);
        assertThat(onVlan.getNetdev()).contains("bond0.100");
        assertThat(onVlan.getGidIndex()).hasValue(3);
        assertThatThrownBy(() -> get(driver(sys, "netdevs", "ens9"), 1))
                .hasMessageContaining("mlx5_bond_0/1 (Ethernet, ACTIVE/LinkUp, 100 Gb/s): no GID in use on netdevs [ens9]");
    }

    @Test
    @DisplayName("a NIC that vanishes while sysfs is read is skipped with a WARN naming it; the healthy NICs are handed out")
    void vanishedNic() throws Exception {
        FakeFileTree sys = host(FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).infiniband("mlx5_1", 200, true)
                .infiniband("mlx5_2", 200, true));
        // what the kernel leaves between listing class/infiniband and reading a removed device:
        // its name, pointing at a device folder that is gone
        sys.remove("class/infiniband/mlx5_1");
        sys.symlink("class/infiniband/mlx5_1", "../../devices/pci0000:00/0000:3c:00.0/infiniband/mlx5_1");

        try (LogCapture log = LogCapture.warnings(SysfsPorts.class)) {
            assertThat(get(driver(sys), 2)).extracting(p -> p.getDevice() + "/" + p.getPort())
                    .containsExactly("mlx5_0/1", "mlx5_2/1");
            assertThat(log.text()).contains("RDMA device mlx5_1 vanished while it was read")
                    .contains("which does not exist), skipped; the other devices are offered");
        }
        assertThatThrownBy(() -> get(driver(sys), 3))
                .hasMessageContaining("has 2 that are healthy and match the selectors [mlx5_0/1, mlx5_2/1]")
                .hasMessageContaining("Lower external-resource.<resource>.amount to 2");
    }

    @Test
    @DisplayName("a NIC whose folder is there while a port file or its ports folder is gone (driver reload, hot removal) is left out with one WARN; a damaged file stays an error")
    void halfThereNic() throws Exception {
        FakeFileTree sys = host(FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).infiniband("mlx5_1", 200, true)
                .infiniband("mlx5_2", 200, true));
        sys.remove("class/infiniband/mlx5_0/ports/1/state");
        sys.remove("class/infiniband/mlx5_1/ports");

        try (LogCapture log = LogCapture.warnings(SysfsPorts.class)) {
            assertThat(get(driver(sys), 1)).extracting(p -> p.getDevice() + "/" + p.getPort()).containsExactly("mlx5_2/1");
            assertThat(log.text()).contains("RDMA device mlx5_0 is half there while it is read (its folder "
                    + sys.path("class/infiniband/mlx5_0") + " is there, but ")
                    .contains(sys.path("class/infiniband/mlx5_0/ports/1/state") + " does not exist")
                    .contains("RDMA device mlx5_1 is half there")
                    .contains("cannot list " + sys.path("class/infiniband/mlx5_1/ports") + ": No such file or directory");
            assertThat(log.text().split("\n")).filteredOn(l -> l.contains("is half there")).hasSize(2);
        }
        assertThatThrownBy(() -> get(driver(sys), 2))
                .hasMessageContaining("has 1 that are healthy and match the selectors [mlx5_2/1]")
                .hasMessageContaining("left out while they vanished or were half there (a driver reload or hot removal?)")
                .hasMessageContaining("mlx5_0 (half there: ")
                .hasMessageContaining("ports/1/state does not exist");

        sys.file("class/infiniband/mlx5_2/ports/1/state", "ACTIVE");
        assertThatThrownBy(() -> get(driver(sys), 1))
                .as("a file that is there and damaged is the operator's to fix, not a device to skip")
                .hasMessageContaining("mlx5_2/ports/1/state is 'ACTIVE'; expected '<number>: <name>'");
    }

    @Test
    @DisplayName("retrievals while a NIC's port files and ports folder come and go (a driver reloading in a loop) all succeed with the other NIC")
    void flappingNic() throws Exception {
        FakeFileTree sys = host(FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).infiniband("mlx5_1", 200, true));
        Path ports = sys.path("class/infiniband/mlx5_0/ports");
        Path aside = sys.path("class/infiniband/mlx5_0/ports.away");
        Path state = sys.path("class/infiniband/mlx5_0/ports/1/state");
        Path stateAside = sys.path("class/infiniband/mlx5_0/state.away");
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicLong flaps = new java.util.concurrent.atomic.AtomicLong();
        Thread reload = new Thread(() -> {
            try {
                while (!stop.get()) {
                    // renames: each file is either whole or absent, as sysfs shows it
                    Files.move(state, stateAside);
                    Files.move(stateAside, state);
                    Files.move(ports, aside);
                    Files.move(aside, ports);
                    flaps.incrementAndGet();
                }
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }, "driver reload");
        reload.setDaemon(true);
        reload.start();
        try {
            ExternalResourceDriver d = driver(sys);
            for (int i = 0; i < 40; i++) {
                assertThat(get(d, 1)).extracting(RdmaInfo::getDevice).as("retrieval " + i).isSubsetOf("mlx5_0", "mlx5_1").hasSize(1);
            }
        } finally {
            stop.set(true);
            reload.join(10_000);
        }
        assertThat(reload.isAlive()).isFalse();
        assertThat(flaps.get()).as("the NIC flapped during the retrievals").isPositive();
    }

    @Test
    @DisplayName("selectors: pattern, link layer, min rate, netdevs, PCI ids; each rejected port named with its reason")
    void selectors() throws Exception {
        FakeFileTree sys = host(FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).roce("mlx5_1", "ens1f0", "10.0.0.1", 100));
        assertThat(get(driver(sys, "link-layer", "ethernet"), 1)).extracting(RdmaInfo::getDevice).containsExactly("mlx5_1");
        assertThat(get(driver(sys, "device.pattern", "mlx5_0"), 1)).extracting(RdmaInfo::getDevice).containsExactly("mlx5_0");
        assertThat(get(driver(sys, "min-rate", "150"), 1)).extracting(RdmaInfo::getDevice).containsExactly("mlx5_0");
        assertThat(get(driver(sys, "netdevs", "ens1f0"), 1)).extracting(RdmaInfo::getDevice).containsExactly("mlx5_1");
        assertThat(get(driver(sys, "pci.device-ids", "0x101D"), 1)).extracting(RdmaInfo::getDevice).containsExactly("mlx5_1");
        assertThatThrownBy(() -> get(driver(sys, "pci.vendor-ids", "8086"), 1))
                .hasMessageContaining("mlx5_0/1 (InfiniBand, ACTIVE/LinkUp, 200 Gb/s): PCI vendor 0x15b3 is not one of pci.vendor-ids [8086]")
                .hasMessageContaining("mlx5_1/1 (Ethernet, ACTIVE/LinkUp, 100 Gb/s, ens1f0): PCI vendor 0x15b3");
    }

    @Test
    @DisplayName("exclusive with coordination: two TaskManagers get disjoint ports; shared: both get the same ones")
    void sharing() throws Exception {
        FakeFileTree sys = host(FakeRdmaHost.builder().infiniband("mlx5_0", 200, true, true).infiniband("mlx5_1", 200, true, true));
        Path file = temp.resolve("rdma.coordination");
        String[] exclusive = {"coordination.enabled", "true", "coordination.file", file.toString()};
        List<RdmaInfo> a = get(driver(sys, exclusive), 2);
        List<RdmaInfo> b = get(driver(sys, exclusive), 2);
        assertThat(a).doesNotContainAnyElementsOf(b);
        assertThat(Files.readString(file)).contains("mlx5_0/1 ", "mlx5_1/2 ");
        assertThatThrownBy(() -> get(driver(sys, exclusive), 1)).hasMessageContaining("0 of 4 discovered devices are free");

        assertThat(get(driver(sys, "sharing", "shared"), 2)).isEqualTo(get(driver(sys, "sharing", "shared"), 2));
    }

    @Test
    @DisplayName("decorators: the configured Kubernetes and Yarn names")
    void decorators() throws Exception {
        FakeFileTree sys = host(FakeRdmaHost.builder().infiniband("mlx5_0", 200, true));
        RdmaDriver d = (RdmaDriver) driver(sys, "kubernetes.resource-name", "rdma/ib", "yarn.resource-name", "rdma-ib");
        assertThat(d.kubernetesResources(1)).containsExactly(java.util.Map.entry("rdma/ib", 1L));
        assertThat(d.yarnResources(1)).containsExactly(java.util.Map.entry("rdma-ib", 1L));
        assertThat(((RdmaDriver) driver(sys)).kubernetesResources(2)).containsExactly(java.util.Map.entry("rdma/hca_shared_devices_a", 2L));
    }
}
