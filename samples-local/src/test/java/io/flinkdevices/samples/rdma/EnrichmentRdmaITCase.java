package io.flinkdevices.samples.rdma;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Map;
import java.util.Optional;

/**
 * The RDMA path for real: where this host has an RDMA port whose netdev has an IPv4 address and
 * libdisni loads, the table server registers its table on that port and the job's subtasks read it
 * by RDMA through the driver's port, with exact scores. Skipped, with the reason printed, elsewhere.
 */
class EnrichmentRdmaITCase {

    @Test
    @DisplayName("on a host with an RDMA NIC and libdisni, the subtasks read the table by RDMA READs, with exact scores")
    void readsByRdma() throws Exception {
        String disni = RdmaTransport.disniMissing();
        Optional<InetAddress> address = rdmaAddress();
        String whyNot = disni != null ? disni : address.isEmpty() ? "no RDMA port with an IPv4 address on its netdev here" : null;
        if (whyNot != null) {
            System.out.println("EnrichmentRdmaITCase skipped: " + whyNot);
        }
        Assumptions.assumeTrue(whyNot == null, whyNot);

        try (TableServer server = TableServer.start(address.get(), 0, 10_000, FeatureTable.DEFAULT_DIM)) {
            String rdma = server.startRdma(new InetSocketAddress(address.get(), 7471));
            System.out.println(rdma);
            assertThat(rdma).startsWith("RDMA endpoint on ");
            EnrichmentJob.Result r = EnrichmentLocal.run(
                    EnrichmentJob.Options.server(address.get().getHostAddress(), server.port()).keys(10_000).events(50_000).batch(256).parallelism(1),
                    1,
                    Map.of());
            System.out.println(r.summary());
            assertThat(r.subtasksRdma).isEqualTo(1);
            assertThat(r.checked).isPositive();
            assertThat(r.mismatches).isZero();
        }
    }

    /** The IPv4 address of the netdev of this host's first RDMA port that has one. */
    private static Optional<InetAddress> rdmaAddress() throws Exception {
        Path ib = Path.of("/sys/class/infiniband");
        if (!Files.isDirectory(ib)) {
            return Optional.empty();
        }
        try (var devices = Files.list(ib)) {
            for (Path dev : (Iterable<Path>) devices::iterator) {
                Path ndevs = dev.resolve("ports/1/gid_attrs/ndevs/0");
                if (!Files.isReadable(ndevs)) {
                    continue;
                }
                NetworkInterface nic = NetworkInterface.getByName(Files.readString(ndevs).strip());
                if (nic == null) {
                    continue;
                }
                for (InetAddress a : Collections.list(nic.getInetAddresses())) {
                    if (a instanceof Inet4Address) {
                        return Optional.of(a);
                    }
                }
            }
        }
        return Optional.empty();
    }
}
