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
    /**
     * The GID table is read up to this many unused entries in a row. The kernel's GID cache fills
     * the table from index 0 and gives a new address the lowest free entry, so the used entries
     * sit at the start with at most the holes that removed addresses left; a ConnectX port has
     * 255 entries, and reading every one would cost about 2 ms a port. A GID behind 8 holes in a
     * row is not seen (log: "no GID in use" or a less preferred GID is chosen).
     */
    static final int UNUSED_RUN_ENDS_TABLE = 8;
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

    /**
     * Every port of every NIC. Under a root that is not the kernel's sysfs every attribute is read on
     * an opener thread ({@link Sysfs}), so the attributes of all NICs and ports and the first window
     * of every GID table are read ahead in one go, and what the GID tables need next in one go per
     * round (mostly one more): a discovery pays two or three thread switches, not one an attribute.
     */
    List<RdmaPort> ports() throws DeviceDriverException {
        return ports(new ArrayList<>());
    }

    /**
     * Every port of every NIC, as {@link #ports()}; a NIC that vanished or is half there while it is
     * read (see {@link #guard}) is left out with one WARN and added to {@code leftOut} as {@code
     * <dev> (<what is missing>)}, for the message of a retrieval that finds too few ports.
     */
    List<RdmaPort> ports(List<String> leftOut) throws DeviceDriverException {
        Optional<String> folder = sys.folderProblem(CLASS);
        if (folder.isPresent()) {
            throw new DeviceDriverException(describe() + ": " + sys.resolve(CLASS) + " " + folder.get() + "; expected the"
                    + " RDMA devices of the kernel's ib_core (is an RDMA driver such as mlx5_ib loaded, and is /sys"
                    + " mounted in the container?)");
        }
        Map<String, Map<Integer, String>> nics = new LinkedHashMap<>();
        Map<String, GidScan> scans = new LinkedHashMap<>();
        for (String dev : sys.list(CLASS)) {
            guard(nics, leftOut, dev, () -> nics.put(dev, portFolders(dev, scans)));
        }
        List<String> ahead = new ArrayList<>();
        for (Map.Entry<String, Map<Integer, String>> nic : nics.entrySet()) {
            String d = CLASS + "/" + nic.getKey() + "/";
            ahead.addAll(List.of(d + "node_guid", d + "device/vendor", d + "device/device", d + "device/numa_node"));
            for (String p : nic.getValue().values()) {
                for (String a : PORT_ATTRIBUTES) {
                    ahead.add(p + a);
                }
                ahead.addAll(scans.get(p).wanted());
            }
        }
        Sysfs s = sys.readAhead(ahead);
        Map<String, List<RdmaPort.Builder>> found = new LinkedHashMap<>();
        for (String dev : new ArrayList<>(nics.keySet())) {
            Sysfs read = s;
            guard(nics, leftOut, dev, () -> found.put(dev, device(read, dev, nics.get(dev))));
        }
        // the GID tables, all ports of all NICs a round at a time
        while (true) {
            for (String dev : new ArrayList<>(nics.keySet())) {
                Sysfs read = s;
                guard(nics, leftOut, dev, () -> {
                    for (String p : nics.get(dev).values()) {
                        scans.get(p).take(read);
                    }
                });
            }
            List<String> wanted = new ArrayList<>();
            for (Map<Integer, String> ports : nics.values()) {
                for (String p : ports.values()) {
                    wanted.addAll(scans.get(p).wanted());
                }
            }
            if (wanted.isEmpty()) {
                break;
            }
            s = s.readAhead(wanted);
        }
        List<RdmaPort> out = new ArrayList<>();
        for (String dev : nics.keySet()) {
            for (RdmaPort.Builder b : found.get(dev)) {
                out.add(b.gid(gids.choose(scans.get(b.folder).entries())));
            }
        }
        return out;
    }

    /** A step of reading one NIC. */
    private interface NicStep {
        void run() throws DeviceDriverException;
    }

    /**
     * Runs {@code step} of NIC {@code dev}. A NIC that goes away while it is read (a driver unbind,
     * a VF removed, a reset) leaves a name in the listing and nothing behind it; during a driver
     * reload or a hot removal its folder stays a moment while its files ({@code ports/1/state}) or
     * folders ({@code ports/}) are gone or not yet back. Either way it is dropped from {@code nics}
     * with one WARN and the other NICs are offered. A file that is there and damaged stays an
     * error: that NIC is not half there but broken, and the operator must hear of it.
     */
    private void guard(Map<String, ?> nics, List<String> leftOut, String dev, NicStep step) throws DeviceDriverException {
        try {
            step.run();
        } catch (DeviceDriverException e) {
            Optional<String> gone = sys.folderProblem(CLASS + "/" + dev)
                    .filter(why -> why.startsWith("does not exist") || why.endsWith("which does not exist"));
            if (gone.isEmpty() && !Sysfs.vanished(e)) {
                throw e;
            }
            nics.remove(dev);
            if (gone.isPresent()) {
                leftOut.add(dev + " (" + sys.resolve(CLASS + "/" + dev) + " " + gone.get() + ")");
                LOG.warn("RDMA device {} vanished while it was read ({} {}), skipped; the other devices are offered."
                        + " What failed: {}", dev, sys.resolve(CLASS + "/" + dev), gone.get(), e.getMessage());
            } else {
                leftOut.add(dev + " (half there: " + e.getMessage() + ")");
                LOG.warn("RDMA device {} is half there while it is read (its folder {} is there, but {}: a driver reload"
                        + " or hot removal?), skipped; the other devices are offered", dev, sys.resolve(CLASS + "/" + dev),
                        e.getMessage());
            }
        }
    }

    /** The NIC's port folders by port number, and a GID scan for each. */
    private Map<Integer, String> portFolders(String dev, Map<String, GidScan> scans) throws DeviceDriverException {
        String d = CLASS + "/" + dev + "/";
        Map<Integer, String> ports = new LinkedHashMap<>();
        for (String portName : sys.list(d + "ports")) {
            if (isNumber(portName, 9)) {
                String p = d + "ports/" + portName + "/";
                ports.put(Integer.parseInt(portName), p);
                scans.put(p, new GidScan(p, gidNames(p)));
            }
        }
        return ports;
    }

    /** The NIC's ports from what was read ahead, all but their GID. */
    private List<RdmaPort.Builder> device(Sysfs s, String dev, Map<Integer, String> ports) throws DeviceDriverException {
        String d = CLASS + "/" + dev + "/";
        String guid = s.attribute(d + "node_guid").orElse(null);
        String pci = s.pciAddress(d + "device").orElse(null);
        String vendor = s.attribute(d + "device/vendor").orElse(null);
        String device = s.attribute(d + "device/device").orElse(null);
        // -1 is "no NUMA node"; anything above an int would be truncated into another node
        Optional<Long> node = s.longAttribute(d + "device/numa_node", -1, Integer.MAX_VALUE);
        int numa = node.isPresent() ? node.get().intValue() : -1;
        List<RdmaPort.Builder> out = new ArrayList<>();
        for (Map.Entry<Integer, String> e : ports.entrySet()) {
            String p = e.getValue();
            String state = afterColon(s.requireAttribute(p + "state"), p + "state", "4: ACTIVE");
            String phys = afterColon(s.requireAttribute(p + "phys_state"), p + "phys_state", "5: LinkUp");
            out.add(new RdmaPort.Builder(p, dev, e.getKey(), state, phys, linkLayer(s, p + "link_layer"), rate(s, p + "rate"),
                    guid, pci, vendor, device, numa));
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

    static String abbreviate(String s) {
        String clean = s.replaceAll("\\p{Cntrl}", "?");
        return clean.length() > 80 ? clean.substring(0, 80) + "..." : clean;
    }
}
