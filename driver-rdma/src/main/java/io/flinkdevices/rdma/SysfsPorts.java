package io.flinkdevices.rdma;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.Sysfs;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
    /** GID entries read ahead at a time: the used entries and the unused run after them, mostly. */
    static final int GID_WINDOW = 2 * UNUSED_RUN_ENDS_TABLE;
    /** What is read of every port at discovery. */
    private static final List<String> PORT_ATTRIBUTES = List.of("state", "phys_state", "link_layer", "rate");

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

    /**
     * The ports of one NIC. Under a root that is not the kernel's sysfs every attribute is read on
     * an opener thread ({@link Sysfs}), so the NIC's attributes, each port's and the first window of
     * each GID table are read ahead in one go, and the rest of a GID table a window at a time.
     */
    private List<RdmaPort> device(String dev) throws DeviceDriverException {
        List<RdmaPort> out = new ArrayList<>();
        String d = CLASS + "/" + dev + "/";
        Map<Integer, String> portFolders = new LinkedHashMap<>();
        for (String portName : sys.list(d + "ports")) {
            try {
                portFolders.put(Integer.parseInt(portName), d + "ports/" + portName + "/");
            } catch (NumberFormatException e) {
                // not a port
            }
        }
        List<String> ahead = new ArrayList<>(List.of(d + "node_guid", d + "device/vendor", d + "device/device",
                d + "device/numa_node"));
        Map<String, List<String>> gidNames = new LinkedHashMap<>();
        for (String p : portFolders.values()) {
            for (String a : PORT_ATTRIBUTES) {
                ahead.add(p + a);
            }
            List<String> names = gidNames(p);
            gidNames.put(p, names);
            ahead.addAll(gidPaths(p, names, 0));
        }
        Sysfs s = sys.readAhead(ahead);
        String guid = s.attribute(d + "node_guid").orElse(null);
        String pci = s.pciAddress(d + "device").orElse(null);
        String vendor = s.attribute(d + "device/vendor").orElse(null);
        String device = s.attribute(d + "device/device").orElse(null);
        // -1 is "no NUMA node"; anything above an int would be truncated into another node
        int numa = s.longAttribute(d + "device/numa_node", -1, Integer.MAX_VALUE).map(Long::intValue).orElse(-1);
        for (Map.Entry<Integer, String> e : portFolders.entrySet()) {
            String p = e.getValue();
            String state = afterColon(s.requireAttribute(p + "state"), p + "state", "4: ACTIVE");
            String phys = afterColon(s.requireAttribute(p + "phys_state"), p + "phys_state", "5: LinkUp");
            String linkLayer = linkLayer(s, p + "link_layer");
            long rate = rate(s, p + "rate");
            GidChoice.Chosen gid = gids.choose(readGids(s, p, gidNames.get(p)));
            out.add(new RdmaPort(dev, e.getKey(), state, phys, linkLayer, rate, guid, pci, vendor, device, numa,
                    gid == null ? null : gid.gid, gid == null ? -1 : gid.index, gid == null ? null : gid.type,
                    gid == null ? null : gid.netdev));
        }
        return out;
    }

    /** The kernel's words: {@code InfiniBand}, {@code Ethernet} or {@code Unknown}; anything else is a damaged file. */
    private String linkLayer(Sysfs s, String rel) throws DeviceDriverException {
        String v = s.requireAttribute(rel);
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
    private long rate(Sysfs s, String rel) throws DeviceDriverException {
        Optional<String> v = s.attribute(rel);
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

    /** The numeric entries of a port's GID table in table order; empty when it has none. */
    private List<String> gidNames(String port) throws DeviceDriverException {
        List<String> names = new ArrayList<>();
        if (!sys.exists(port + "gids")) {
            return names;
        }
        for (String i : sys.list(port + "gids")) {
            if (isNumber(i, 9)) {
                names.add(i);
            }
        }
        return names;
    }

    /** The files of the window of GIDs from {@code from}: {@link #GID_WINDOW} entries. */
    private static List<String> gidPaths(String port, List<String> names, int from) {
        List<String> paths = new ArrayList<>();
        for (int i = from; i < Math.min(names.size(), from + GID_WINDOW); i++) {
            paths.add(port + "gids/" + names.get(i));
        }
        return paths;
    }

    /**
     * The GIDs in use, up to {@link #UNUSED_RUN_ENDS_TABLE} unused entries in a row, a window at a
     * time: {@code s} has the first window; the attributes of a window's used GIDs are read ahead
     * together with the next window.
     */
    private List<GidChoice.Entry> readGids(Sysfs s, String port, List<String> names) throws DeviceDriverException {
        List<GidChoice.Entry> entries = new ArrayList<>();
        int unusedInARow = 0;
        int next = 0;
        while (next < names.size() && unusedInARow < UNUSED_RUN_ENDS_TABLE) {
            int end = Math.min(names.size(), next + GID_WINDOW);
            Map<String, String> used = new LinkedHashMap<>();
            for (; next < end && unusedInARow < UNUSED_RUN_ENDS_TABLE; next++) {
                String i = names.get(next);
                String gid = s.requireAttribute(port + "gids/" + i);
                if (!isGid(gid)) {
                    throw new DeviceDriverException(s.resolve(port + "gids/" + i) + " is '" + abbreviate(gid)
                            + "'; expected a GID of eight groups of four hex digits such as"
                            + " fe80:0000:0000:0000:0e42:a1ff:fe65:e4ec (a truncated or damaged file?)");
                }
                if (gid.equals(ZERO_GID)) {
                    unusedInARow++;
                } else {
                    unusedInARow = 0;
                    used.put(i, gid);
                }
            }
            // the kernel answers EINVAL for the attributes of an unused entry, so only these are read
            List<String> ahead = new ArrayList<>();
            for (String i : used.keySet()) {
                ahead.add(port + "gid_attrs/types/" + i);
                ahead.add(port + "gid_attrs/ndevs/" + i);
            }
            if (next < names.size() && unusedInARow < UNUSED_RUN_ENDS_TABLE) {
                ahead.addAll(gidPaths(port, names, next));
            }
            s = s.readAhead(ahead);
            for (Map.Entry<String, String> u : used.entrySet()) {
                Optional<String> type = s.attribute(port + "gid_attrs/types/" + u.getKey());
                Optional<String> ndev = s.attribute(port + "gid_attrs/ndevs/" + u.getKey());
                entries.add(new GidChoice.Entry(Integer.parseInt(u.getKey()), u.getValue().toLowerCase(java.util.Locale.ROOT),
                        type.orElse(null), ndev.filter(n -> !n.isEmpty()).orElse(null)));
            }
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
