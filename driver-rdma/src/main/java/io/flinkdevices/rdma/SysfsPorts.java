package io.flinkdevices.rdma;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.Sysfs;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Lists every RDMA port of the host from {@code class/infiniband/} (the kernel's ib_core sysfs
 * ABI, Documentation/ABI/stable/sysfs-class-infiniband): per device {@code node_guid} and the PCI
 * device behind {@code device} ({@code vendor}, {@code device}, {@code numa_node}); per port {@code
 * state} ({@code "4: ACTIVE"}), {@code phys_state} ({@code "5: LinkUp"}), {@code link_layer},
 * {@code rate} ({@code "100 Gb/sec (4X EDR)"}), and the GID table {@code gids/<i>} with {@code
 * gid_attrs/types/<i>} and {@code gid_attrs/ndevs/<i>} for each GID in use.
 */
final class SysfsPorts {

    static final String CLASS = "class/infiniband";
    private static final String ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000";
    /**
     * The GID table is read up to this many unused entries in a row. The kernel's GID cache fills
     * the table from index 0 and gives a new address the lowest free entry, so the used entries
     * sit at the start with at most the holes that removed addresses left; a ConnectX port has
     * 255 entries, and reading every one would cost about 2 ms a port. A GID behind 8 holes in a
     * row is not seen (log: "no GID in use" or a less preferred GID is chosen).
     */
    static final int UNUSED_RUN_ENDS_TABLE = 8;

    private final Sysfs sys;
    private final GidChoice gids;

    SysfsPorts(Sysfs sys, GidChoice gids) {
        this.sys = sys;
        this.gids = gids;
    }

    String describe() {
        return "sysfs (" + sys.resolve(CLASS) + ")";
    }

    List<RdmaPort> ports() throws DeviceDriverException {
        if (!Files.isDirectory(sys.resolve(CLASS))) {
            throw new DeviceDriverException(describe() + ": " + sys.resolve(CLASS) + " does not exist; expected the"
                    + " RDMA devices of the kernel's ib_core (is an RDMA driver such as mlx5_ib loaded, and is /sys"
                    + " mounted in the container?)");
        }
        List<RdmaPort> out = new ArrayList<>();
        for (String dev : sys.list(CLASS)) {
            String d = CLASS + "/" + dev + "/";
            String guid = sys.attribute(d + "node_guid").orElse(null);
            String pci = sys.pciAddress(d + "device").orElse(null);
            String vendor = sys.attribute(d + "device/vendor").orElse(null);
            String device = sys.attribute(d + "device/device").orElse(null);
            int numa = sys.longAttribute(d + "device/numa_node").map(Long::intValue).filter(n -> n >= 0).orElse(-1);
            for (String portName : sys.list(d + "ports")) {
                String p = d + "ports/" + portName + "/";
                int port;
                try {
                    port = Integer.parseInt(portName);
                } catch (NumberFormatException e) {
                    continue;
                }
                String state = afterColon(sys.requireAttribute(p + "state"), p + "state", "4: ACTIVE");
                String phys = afterColon(sys.requireAttribute(p + "phys_state"), p + "phys_state", "5: LinkUp");
                String linkLayer = sys.requireAttribute(p + "link_layer");
                long rate = sys.attribute(p + "rate").map(SysfsPorts::gbps).orElse(-1L);
                GidChoice.Chosen gid = gids.choose(readGids(p));
                out.add(new RdmaPort(dev, port, state, phys, linkLayer, rate, guid, pci, vendor, device, numa,
                        gid == null ? null : gid.gid, gid == null ? -1 : gid.index, gid == null ? null : gid.type,
                        gid == null ? null : gid.netdev));
            }
        }
        return out;
    }

    private List<GidChoice.Entry> readGids(String port) throws DeviceDriverException {
        List<GidChoice.Entry> entries = new ArrayList<>();
        if (!sys.exists(port + "gids")) {
            return entries;
        }
        int unusedInARow = 0;
        for (String i : sys.list(port + "gids")) {
            int index;
            try {
                index = Integer.parseInt(i);
            } catch (NumberFormatException e) {
                continue;
            }
            if (unusedInARow == UNUSED_RUN_ENDS_TABLE) {
                break;
            }
            String gid = sys.requireAttribute(port + "gids/" + i);
            if (!gid.matches("[0-9a-fA-F]{4}(:[0-9a-fA-F]{4}){7}")) {
                throw new DeviceDriverException(sys.resolve(port + "gids/" + i) + " is '" + abbreviate(gid)
                        + "'; expected a GID of eight groups of four hex digits such as"
                        + " fe80:0000:0000:0000:0e42:a1ff:fe65:e4ec (a truncated or damaged file?)");
            }
            if (gid.equals(ZERO_GID)) {
                unusedInARow++;
                continue;
            }
            unusedInARow = 0;
            // the kernel answers EINVAL for the attributes of an unused entry, so only these are read
            Optional<String> type = sys.attribute(port + "gid_attrs/types/" + i);
            Optional<String> ndev = sys.attribute(port + "gid_attrs/ndevs/" + i);
            entries.add(new GidChoice.Entry(index, gid.toLowerCase(java.util.Locale.ROOT), type.orElse(null),
                    ndev.filter(n -> !n.isEmpty()).orElse(null)));
        }
        return entries;
    }

    private String afterColon(String value, String rel, String example) throws DeviceDriverException {
        int colon = value.indexOf(':');
        String v = colon < 0 ? "" : value.substring(colon + 1).strip();
        if (colon <= 0 || v.isEmpty() || !value.substring(0, colon).strip().matches("\\d{1,2}")) {
            throw new DeviceDriverException(sys.resolve(rel) + " is '" + abbreviate(value) + "'; expected '<number>: <name>'"
                    + " such as '" + example + "' (a truncated or damaged file?)");
        }
        return v;
    }

    /** {@code "100 Gb/sec (4X EDR)"} -> 100; {@code "2.5 Gb/sec (1X SDR)"} -> 2; -1 when unreadable. */
    static long gbps(String rate) {
        int space = rate.indexOf(' ');
        String n = space < 0 ? rate : rate.substring(0, space);
        try {
            return (long) Double.parseDouble(n);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static String abbreviate(String s) {
        String clean = s.replaceAll("\\p{Cntrl}", "?");
        return clean.length() > 80 ? clean.substring(0, 80) + "..." : clean;
    }
}
