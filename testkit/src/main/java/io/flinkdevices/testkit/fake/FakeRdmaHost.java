package io.flinkdevices.testkit.fake;

import io.flinkdevices.sdk.info.RdmaInfo;

import org.apache.flink.annotation.PublicEvolving;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A fake RDMA host on a {@link FakeHost}: the {@code sys/class/infiniband} tree of the kernel's
 * ib_core (Documentation/ABI/stable/sysfs-class-infiniband), as ConnectX adapters fill it.
 *
 * <ul>
 *   <li>{@code class/infiniband/<dev>/node_guid} ({@code 0c42:a103:0065:e4ec}), {@code fw_ver}, and
 *       {@code device}, a link to the PCI device with {@code vendor} ({@code 0x15b3}), {@code
 *       device} and {@code numa_node};
 *   <li>{@code ports/<n>/state} ({@code 4: ACTIVE}, {@code 1: DOWN}), {@code phys_state} ({@code
 *       5: LinkUp}, {@code 3: Disabled}), {@code link_layer} ({@code InfiniBand} or {@code
 *       Ethernet}), {@code rate} ({@code 200 Gb/sec (4X HDR)});
 *   <li>{@code ports/<n>/counters/} with {@code port_rcv_data}, {@code port_xmit_data}, {@code
 *       symbol_error} and {@code link_downed}, all 0;
 *   <li>a GID table of 16 entries {@code gids/<i>}, unused ones all zeros; for each used one {@code
 *       gid_attrs/types/<i>} ({@code IB/RoCE v1} or {@code RoCE v2}) and, on Ethernet, {@code
 *       gid_attrs/ndevs/<i>} (the netdev).
 * </ul>
 *
 * <pre>{@code
 * FakeFileTree sys = FakeRdmaHost.builder()
 *         .infiniband("mlx5_0", 200, true, false)        // port 1 up, port 2 down
 *         .roce("mlx5_bond_0", "bond0", "10.1.2.3", 100)  // RoCE v1 and v2, link-local and IPv4
 *         .installOn(host);
 * // while a cluster runs: every change is one atomic file replacement, as the kernel's are
 * FakeRdmaHost.portDown(sys, "mlx5_0", 1);
 * FakeRdmaHost.addToCounter(sys, "mlx5_0", 1, "port_rcv_data", 4096);
 * FakeRdmaHost.portUp(sys, "mlx5_0", 1);
 * }</pre>
 */
@PublicEvolving
public final class FakeRdmaHost {

    /** Entries of every port's GID table. */
    public static final int GID_TABLE = 16;

    private FakeRdmaHost() {}

    /** Starts a host description. */
    public static Builder builder() {
        return new Builder();
    }

    /** The node GUID of the {@code n}-th device ({@code 0c42:a103:00NN:e4ec}). */
    public static String nodeGuid(int n) {
        return String.format(Locale.ROOT, "0c42:a103:00%02x:e4ec", n);
    }

    /** The PCI address of the {@code n}-th device. */
    public static String pciAddress(int n) {
        return String.format(Locale.ROOT, "0000:%02x:00.0", 0x3b + n);
    }

    /** The IPv4-mapped GID of {@code ipv4} ({@code 0000:...:ffff:0a01:0203} for 10.1.2.3). */
    public static String ipv4Gid(String ipv4) {
        String[] o = ipv4.split("\\.");
        return String.format(Locale.ROOT, "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x",
                Integer.parseInt(o[0]), Integer.parseInt(o[1]), Integer.parseInt(o[2]), Integer.parseInt(o[3]));
    }

    /** The link-local GID of the {@code n}-th device ({@code fe80::<guid>}). */
    public static String linkLocalGid(int n) {
        return "fe80:0000:0000:0000:" + nodeGuid(n);
    }

    /** The port counters the fake writes, as the kernel names them. */
    public static final List<String> COUNTERS = List.of("port_rcv_data", "port_xmit_data", "symbol_error", "link_downed");

    /**
     * Takes a port DOWN while the host is in use, as a pulled cable does: {@code state} {@code 1:
     * DOWN}, {@code phys_state} {@code 3: Disabled}, and {@code link_downed} counts one more.
     */
    public static void portDown(FakeFileTree sys, String device, int port) {
        synchronized (sys) {
            String p = portPath(device, port);
            sys.file(p + "state", "1: DOWN");
            sys.file(p + "phys_state", "3: Disabled");
            addToCounter(sys, device, port, "link_downed", 1);
        }
    }

    /**
     * Degrades a port while the host is in use, as a link with symbol errors does: {@code state}
     * stays {@code 4: ACTIVE}, {@code phys_state} is {@code 6: LinkErrorRecovery} (InfiniBand's
     * physical state of a link that retrains after errors), and {@code symbol_error} counts one
     * more. The RDMA driver reports such a port {@code degraded} and offers it after healthy ones.
     */
    public static void portDegraded(FakeFileTree sys, String device, int port) {
        synchronized (sys) {
            String p = portPath(device, port);
            sys.file(p + "state", "4: ACTIVE");
            sys.file(p + "phys_state", "6: LinkErrorRecovery");
            addToCounter(sys, device, port, "symbol_error", 1);
        }
    }

    /** Brings a port back: {@code 4: ACTIVE} and {@code 5: LinkUp}. */
    public static void portUp(FakeFileTree sys, String device, int port) {
        synchronized (sys) {
            String p = portPath(device, port);
            sys.file(p + "phys_state", "5: LinkUp");
            sys.file(p + "state", "4: ACTIVE");
        }
    }

    /** Sets a port counter ({@link #COUNTERS}) to {@code value}. */
    public static void setCounter(FakeFileTree sys, String device, int port, String counter, long value) {
        sys.file(portPath(device, port) + "counters/" + counter, Long.toString(value));
    }

    /** Adds {@code delta} to a port counter, as traffic or errors move it; returns the new value. */
    public static long addToCounter(FakeFileTree sys, String device, int port, String counter, long delta) {
        synchronized (sys) {
            String rel = portPath(device, port) + "counters/" + counter;
            long v = Files.exists(sys.path(rel)) ? Long.parseLong(sys.read(rel).strip()) : 0;
            setCounter(sys, device, port, counter, v + delta);
            return v + delta;
        }
    }

    /** Removes a whole device, as a driver unbind or a reset does. */
    public static void removeDevice(FakeFileTree sys, String device) {
        sys.remove("class/infiniband/" + device);
    }

    private static String portPath(String device, int port) {
        return "class/infiniband/" + device + "/ports/" + port + "/";
    }

    /** Builds the host: devices in the order given, named as given. */
    @PublicEvolving
    public static final class Builder {
        private final List<Device> devices = new ArrayList<>();

        private Builder() {}

        /**
         * An InfiniBand adapter (ConnectX-6) with one port per entry of {@code portsUp}: {@code
         * true} for an ACTIVE/LinkUp port, {@code false} for a DOWN/Disabled one.
         */
        public Builder infiniband(String name, int rateGbps, boolean... portsUp) {
            devices.add(new Device(name, "InfiniBand", rateGbps, portsUp, null, null));
            return this;
        }

        /**
         * A RoCE adapter with one ACTIVE port on {@code netdev} (a bond, say) holding four GIDs:
         * link-local RoCE v1 and v2, then IPv4-mapped RoCE v1 and v2 for {@code ipv4}, in the order
         * the kernel adds them.
         */
        public Builder roce(String name, String netdev, String ipv4, int rateGbps) {
            devices.add(new Device(name, "Ethernet", rateGbps, new boolean[] {true}, netdev, ipv4));
            return this;
        }

        /**
         * Writes the tree into {@code host}'s {@code sys/} and registers the host's {@link
         * DeviceFaults} (device {@code i} is the i-th port, device by device); returns the tree
         * (the driver's {@code sysfs.root}). On a host that {@link
         * FakeHost#leaveOutOptionalFields() leaves out optional fields}, no device has a {@code
         * node_guid} or a PCI {@code numa_node}. The host's {@link FakeHost#failedDevices() failed}
         * ports (the i-th port, device by device) are DOWN ({@link #portDown}), its {@link
         * FakeHost#degradedDevices() degraded} ones ACTIVE in LinkErrorRecovery ({@link
         * #portDegraded}). Each port's truth is declared on the host ({@link
         * FakeHost#declareTruth}, named by {@code device} and {@code port}): its adapter's PCI
         * address and NUMA node (none on a host that leaves optional fields out).
         */
        public FakeFileTree installOn(FakeHost host) {
            FakeFileTree sys = host.sys();
            sys.dir("class/infiniband");
            int portIndex = 0;
            for (int n = 0; n < devices.size(); n++) {
                Device d = devices.get(n);
                String dev = "class/infiniband/" + d.name + "/";
                String pci = "devices/pci0000:00/" + pciAddress(n);
                // what the adapter really is (its ports share it); the files below are written from it
                DeviceTruth truth = DeviceTruth.of(RdmaInfo.KEY_DEVICE, d.name).pciAddress(pciAddress(n));
                truth = host.optionalFieldsLeftOut() ? truth.noNumaNode() : truth.numaNode(n % 2);
                sys.file(pci + "/vendor", "0x15b3");
                sys.file(pci + "/device", d.ethernet() ? "0x101d" : "0x101b");
                sys.symlink(dev + "device", "../../../" + pci);
                truth.numaNode().ifPresent(node -> sys.file(pci + "/numa_node", Integer.toString(node)));
                if (!host.optionalFieldsLeftOut()) {
                    sys.file(dev + "node_guid", nodeGuid(n));
                }
                sys.file(dev + "fw_ver", "20.31.1014");
                for (int p = 1; p <= d.portsUp.length; p++) {
                    java.util.Map<String, String> portId = new java.util.LinkedHashMap<>(truth.identity());
                    portId.put(RdmaInfo.KEY_PORT, Integer.toString(p));
                    host.declareTruth(portIndex++, withIdentity(truth, portId));
                    boolean up = d.portsUp[p - 1];
                    String port = dev + "ports/" + p + "/";
                    sys.file(port + "state", up ? "4: ACTIVE" : "1: DOWN");
                    sys.file(port + "phys_state", up ? "5: LinkUp" : "3: Disabled");
                    sys.file(port + "link_layer", d.linkLayer);
                    for (String c : COUNTERS) {
                        sys.file(port + "counters/" + c, "0");
                    }
                    sys.file(port + "rate", d.rateGbps + " Gb/sec (4X " + (d.rateGbps >= 200 ? "HDR" : "EDR") + ")");
                    List<String[]> gids = new ArrayList<>();
                    if (d.ethernet()) {
                        gids.add(new String[] {linkLocalGid(n), "IB/RoCE v1"});
                        gids.add(new String[] {linkLocalGid(n), "RoCE v2"});
                        gids.add(new String[] {ipv4Gid(d.ipv4), "IB/RoCE v1"});
                        gids.add(new String[] {ipv4Gid(d.ipv4), "RoCE v2"});
                    } else {
                        gids.add(new String[] {linkLocalGid(n), "IB/RoCE v1"});
                    }
                    for (int i = 0; i < GID_TABLE; i++) {
                        if (i < gids.size()) {
                            sys.file(port + "gids/" + i, gids.get(i)[0]);
                            sys.file(port + "gid_attrs/types/" + i, gids.get(i)[1]);
                            if (d.ethernet()) {
                                sys.file(port + "gid_attrs/ndevs/" + i, d.netdev);
                            }
                        } else {
                            sys.file(port + "gids/" + i, "0000:0000:0000:0000:0000:0000:0000:0000");
                        }
                    }
                }
            }
            PortFaults faults = new PortFaults(sys, ports());
            for (int failed : host.failedDevices()) {
                faults.inject(failed);
            }
            for (int degraded : host.degradedDevices()) {
                faults.degrade(degraded);
            }
            host.faults(faults);
            return sys;
        }

        /** {@code truth}'s facts for the device named by {@code identity}. */
        private static DeviceTruth withIdentity(DeviceTruth truth, java.util.Map<String, String> identity) {
            DeviceTruth t = DeviceTruth.of(identity);
            t = truth.pciAddress().map(t::pciAddress).orElse(t);
            return truth.numaNode().isPresent() ? t.numaNode(truth.numaNode().getAsInt()) : t.noNumaNode();
        }

        /** Every port, device by device: {device name, port number}. */
        private List<String[]> ports() {
            List<String[]> ports = new ArrayList<>();
            for (Device d : devices) {
                for (int p = 1; p <= d.portsUp.length; p++) {
                    ports.add(new String[] {d.name, Integer.toString(p)});
                }
            }
            return ports;
        }
    }

    /**
     * Device {@code i} is the i-th port, device by device: a fault takes it DOWN, a degradation puts
     * its link in error recovery, recovery brings it back ACTIVE and LinkUp.
     */
    private static final class PortFaults implements DeviceFaults {
        private final FakeFileTree sys;
        private final List<String[]> ports;

        PortFaults(FakeFileTree sys, List<String[]> ports) {
            this.sys = sys;
            this.ports = List.copyOf(ports);
        }

        private String[] port(int device) {
            if (device < 0 || device >= ports.size()) {
                throw new IllegalArgumentException("The host has ports 0 to " + (ports.size() - 1) + ", not " + device);
            }
            return ports.get(device);
        }

        @Override
        public void inject(int device) {
            String[] p = port(device);
            portDown(sys, p[0], Integer.parseInt(p[1]));
        }

        @Override
        public void degrade(int device) {
            String[] p = port(device);
            portDegraded(sys, p[0], Integer.parseInt(p[1]));
        }

        @Override
        public boolean degrades() {
            return true;
        }

        @Override
        public void recover(int device) {
            String[] p = port(device);
            portUp(sys, p[0], Integer.parseInt(p[1]));
        }

        @Override
        public String describe() {
            return "the port goes DOWN, or its link into LinkErrorRecovery while ACTIVE (and back to ACTIVE/LinkUp on recovery)";
        }
    }

    private static final class Device {
        final String name;
        final String linkLayer;
        final int rateGbps;
        final boolean[] portsUp;
        final String netdev;
        final String ipv4;

        Device(String name, String linkLayer, int rateGbps, boolean[] portsUp, String netdev, String ipv4) {
            this.name = name;
            this.linkLayer = linkLayer;
            this.rateGbps = rateGbps;
            this.portsUp = portsUp.clone();
            this.netdev = netdev;
            this.ipv4 = ipv4;
        }

        boolean ethernet() {
            return "Ethernet".equals(linkLayer);
        }
    }
}
