package io.flinkdevices.rdma;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.Sysfs;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Lists every RDMA port of the host from {@code class/infiniband/} (the kernel's ib_core sysfs
 * ABI, Documentation/ABI/stable/sysfs-class-infiniband): per device {@code node_guid} and the PCI
 * device behind {@code device} ({@code vendor}, {@code device}, {@code numa_node}); per port {@code
 * state} ({@code "4: ACTIVE"}), {@code phys_state} ({@code "5: LinkUp"}), {@code link_layer},
 * {@code rate} ({@code "100 Gb/sec (4X EDR)"}), and the GID table {@code gids/<i>} with {@code
 * gid_attrs/types/<i>} and {@code gid_attrs/ndevs/<i>} for each GID in use.
 */
final class SysfsPorts {

    private static final Logger LOG = LoggerFactory.getLogger(SysfsPorts.class);
    static final String CLASS = "class/infiniband";
    static final List<String> LINK_LAYERS = List.of("InfiniBand", "Ethernet", "Unknown");
    /** Whole Gb/s, an optional fraction, then the unit: what the kernel's rate_show prints. */
    private static final Pattern RATE = Pattern.compile("(\\d{1,7})(?:\\.\\d{1,3})?(?:\\s+Gb/sec.*)?");
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
        Optional<String> folder = sys.folderProblem(CLASS);
        if (folder.isPresent()) {
            throw new DeviceDriverException(describe() + ": " + sys.resolve(CLASS) + " " + folder.get() + "; expected the"
                    + " RDMA devices of the kernel's ib_core (is an RDMA driver such as mlx5_ib loaded, and is /sys"
                    + " mounted in the container?)");
        }
        List<RdmaPort> out = new ArrayList<>();
        for (String dev : sys.list(CLASS)) {
            try {
                out.addAll(device(dev));
            } catch (DeviceDriverException e) {
                // A NIC that goes away while it is read (a driver unbind, a VF removed, a reset)
                // leaves a name in the listing and nothing behind it; the other NICs are fine.
                Optional<String> gone = sys.folderProblem(CLASS + "/" + dev)
                        .filter(why -> why.startsWith("does not exist") || why.endsWith("which does not exist"));
                if (gone.isEmpty()) {
                    throw e;
                }
                LOG.warn("RDMA device {} vanished while it was read ({} {}), skipped; the other devices are offered."
                        + " What failed: {}", dev, sys.resolve(CLASS + "/" + dev), gone.get(), e.getMessage());
            }
        }
        return out;
    }

    private List<RdmaPort> device(String dev) throws DeviceDriverException {
        List<RdmaPort> out = new ArrayList<>();
        String d = CLASS + "/" + dev + "/";
        String guid = sys.attribute(d + "node_guid").orElse(null);
        String pci = sys.pciAddress(d + "device").orElse(null);
        String vendor = sys.attribute(d + "device/vendor").orElse(null);
        String device = sys.attribute(d + "device/device").orElse(null);
        // -1 is "no NUMA node"; anything above an int would be truncated into another node
        int numa = sys.longAttribute(d + "device/numa_node", -1, Integer.MAX_VALUE).map(Long::intValue).orElse(-1);
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
            String linkLayer = linkLayer(p + "link_layer");
            long rate = rate(p + "rate");
            GidChoice.Chosen gid = gids.choose(readGids(p));
            out.add(new RdmaPort(dev, port, state, phys, linkLayer, rate, guid, pci, vendor, device, numa,
                    gid == null ? null : gid.gid, gid == null ? -1 : gid.index, gid == null ? null : gid.type,
                    gid == null ? null : gid.netdev));
        }
        return out;
    }

    /** The kernel's words: {@code InfiniBand}, {@code Ethernet} or {@code Unknown}; anything else is a damaged file. */
    private String linkLayer(String rel) throws DeviceDriverException {
        String v = sys.requireAttribute(rel);
        if (!LINK_LAYERS.contains(v)) {
            throw new DeviceDriverException(sys.resolve(rel) + " is '" + abbreviate(v) + "'; expected one of "
                    + String.join(", ", LINK_LAYERS) + " (what the kernel's ib_core prints; a damaged file?)");
        }
        return v;
    }

    /**
     * Gb/s from {@code "100 Gb/sec (4X EDR)"}; -1 when the file does not exist. Anything but a
     * plain non-negative number (NaN, Infinity, {@code -5}, {@code fast}) is refused: read as
     * unknown it would pass {@code min-rate}.
     */
    private long rate(String rel) throws DeviceDriverException {
        Optional<String> v = sys.attribute(rel);
        if (v.isEmpty()) {
            return -1;
        }
        long gbps = gbps(v.get());
        if (gbps < 0) {
            throw new DeviceDriverException(sys.resolve(rel) + " is '" + abbreviate(v.get()) + "'; expected '<Gb/s> Gb/sec"
                    + " (<width> <speed>)' such as '100 Gb/sec (4X EDR)' (a damaged file?)");
        }
        return gbps;
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
            if (!isGid(gid)) {
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
        if (colon <= 0 || v.isEmpty() || !isNumber(value.substring(0, colon).strip(), 2)) {
            throw new DeviceDriverException(sys.resolve(rel) + " is '" + abbreviate(value) + "'; expected '<number>: <name>'"
                    + " such as '" + example + "' (a truncated or damaged file?)");
        }
        return v;
    }

    /**
     * Whether {@code s} is eight groups of four hex digits separated by {@code :}, as the kernel
     * prints a GID. Checked by hand: a discovery checks every GID of every port, and {@code
     * String.matches} would compile a pattern for each.
     */
    static boolean isGid(String s) {
        if (s.length() != 39) {
            return false;
        }
        for (int i = 0; i < 39; i++) {
            char c = s.charAt(i);
            boolean ok = i % 5 == 4 ? c == ':' : Character.digit(c, 16) >= 0 && c < 128;
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code s} is 1 to {@code maxDigits} ASCII digits. */
    private static boolean isNumber(String s, int maxDigits) {
        if (s.isEmpty() || s.length() > maxDigits) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    /** {@code "100 Gb/sec (4X EDR)"} -> 100; {@code "2.5 Gb/sec (1X SDR)"} -> 2; -1 when it is no such rate. */
    static long gbps(String rate) {
        Matcher m = RATE.matcher(rate.strip());
        return m.matches() ? Long.parseLong(m.group(1)) : -1;
    }

    private static String abbreviate(String s) {
        String clean = s.replaceAll("\\p{Cntrl}", "?");
        return clean.length() > 80 ? clean.substring(0, 80) + "..." : clean;
    }
}
