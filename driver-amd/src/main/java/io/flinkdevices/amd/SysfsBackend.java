package io.flinkdevices.amd;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.HostValues;
import io.flinkdevices.sdk.host.Sysfs;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Finds AMD GPUs in the KFD topology, as ROCm's runtime does: every node under {@code
 * class/kfd/kfd/topology/nodes/} whose {@code properties} say {@code simd_count > 0} is a GPU agent
 * (CPU nodes have none), in node order. From the properties (format: the kernel's {@code
 * kfd_topology.c}, one {@code key value} line each): {@code vendor_id} (4098 = 0x1002, AMD), {@code
 * domain} and {@code location_id} ({@code bus << 8 | device << 3 | function}) give the PCI address,
 * {@code gfx_target_version} the gfx target ({@code 90402} = gfx942), {@code unique_id} the id
 * rocminfo prints as {@code GPU-<hex>}, {@code drm_render_minor} the render node. Joined with
 * {@code class/drm/renderD<minor>/device/}: {@code product_name}, {@code mem_info_vram_total},
 * {@code device} and, where the kernel has them (MI200/MI300), {@code current_compute_partition}
 * and {@code current_memory_partition}. Then checks that {@code <dev.root>/kfd} and each render
 * node exist: a container that was not given them cannot use the GPU.
 */
final class SysfsBackend implements Backend {

    private static final Logger LOG = LoggerFactory.getLogger(SysfsBackend.class);
    static final String NODES = "class/kfd/kfd/topology/nodes";
    private static final long AMD_VENDOR = 0x1002;
    /** The largest DRM minor (20 bits, the kernel's MINORBITS). */
    static final long MAX_MINOR = (1L << 20) - 1;
    static final List<String> COMPUTE_MODES = List.of("SPX", "DPX", "TPX", "QPX", "CPX");
    static final List<String> MEMORY_MODES = List.of("NPS1", "NPS2", "NPS4", "NPS8");
    /** What discovery reads from a GPU's {@code class/drm/renderD<minor>/device/}. */
    private static final List<String> DEVICE_ATTRIBUTES =
            List.of("current_compute_partition", "current_memory_partition", "device", "product_name", "mem_info_vram_total");

    private final Sysfs sys;
    private final Path devRoot;
    private final String devKey;
    /** What the last listing skipped, for messages. */
    private volatile String skipped = "";

    SysfsBackend(Sysfs sys, Path devRoot, String devKey) {
        this.sys = sys;
        this.devRoot = devRoot;
        this.devKey = devKey;
    }

    @Override
    public String describe() {
        return "sysfs (" + sys.resolve(NODES) + ")";
    }

    @Override
    public List<AmdGpu> agents() throws DeviceDriverException {
        Optional<String> folder = sys.folderProblem(NODES);
        if (folder.isPresent()) {
            throw new DeviceDriverException(
                    describe() + ": " + sys.resolve(NODES) + " " + folder.get() + "; expected the KFD topology"
                            + " of the amdgpu kernel driver (is amdgpu loaded, and is /sys mounted in the"
                            + " container?)");
        }
        List<String> names = sys.list(NODES);
        List<String> propertyFiles = new ArrayList<>(names.size());
        for (String name : names) {
            propertyFiles.add(NODES + "/" + name + "/properties");
        }
        // every node's properties in one go: under a root that is not the kernel's sysfs each file
        // would otherwise cost a switch to HostFiles' opener thread and back
        Sysfs sys = this.sys.readAhead(propertyFiles);
        List<Node> nodes = new ArrayList<>();
        List<String> otherVendors = new ArrayList<>();
        List<String> halfThere = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i);
            String rel = propertyFiles.get(i);
            Map<String, String> p;
            try {
                p = sys.properties(rel);
            } catch (DeviceDriverException e) {
                // a node removed or not yet back (a driver reload, a hot removal, a partition mode
                // change) lists a name whose files are gone: left out; a damaged file stays an error
                if (!Sysfs.vanished(e)) {
                    throw e;
                }
                halfThere.add("node " + name + " (" + sys.resolve(rel) + " does not exist)");
                LOG.warn("{}: KFD node {} vanished or is half there while it is read ({} does not exist: a driver reload"
                        + " or hot removal?), left out; the other GPUs are offered", describe(), name, sys.resolve(rel));
                continue;
            }
            if (sys.longProperty(p, rel, "simd_count") <= 0) {
                continue; // a CPU node
            }
            long vendor = sys.longProperty(p, rel, "vendor_id");
            if (vendor != AMD_VENDOR) {
                otherVendors.add("node " + name + " vendor_id " + vendor);
                continue;
            }
            nodes.add(new Node(name, rel, p));
        }
        String vendors = otherVendors.isEmpty()
                ? ""
                : otherVendors.size() + " GPU agent" + (otherVendors.size() == 1 ? " was" : "s were")
                        + " skipped for a vendor_id other than AMD's 4098 (0x1002): " + otherVendors;
        if (!otherVendors.isEmpty()) {
            LOG.info("{}: {}", describe(), vendors);
        }
        String gone = halfThere.isEmpty()
                ? ""
                : halfThere.size() + " KFD node" + (halfThere.size() == 1 ? " was" : "s were") + " left out while"
                        + " they vanished or were half there (a driver reload or hot removal?): " + halfThere;
        skipped = vendors.isEmpty() || gone.isEmpty() ? vendors + gone : vendors + "; " + gone;
        sys = sys.readAhead(deviceAttributes(nodes));
        Map<String, Integer> partitionsSeen = new HashMap<>();
        Map<String, String[]> perGpu = new HashMap<>();
        List<AmdGpu> gpus = new ArrayList<>();
        int index = 0;
        for (Node n : nodes) {
            // PCI domains are 16 bits and location_id is bus << 8 | device << 3 | function: a value
            // outside would print an address that names no device (or another one)
            long domain = sys.longProperty(n.props, n.rel, "domain", 0, 0xffff);
            long location = sys.longProperty(n.props, n.rel, "location_id", 0, 0xffff);
            String pci = hex(domain, 4) + ":" + hex(location >> 8, 2) + ":" + hex((location >> 3) & 0x1f, 2) + "." + Long.toHexString(location & 7);
            // DRM minors are 20 bits (MINORBITS); a cast of a larger value would name another node
            int minor = (int) sys.longProperty(n.props, n.rel, "drm_render_minor", 0, MAX_MINOR);
            String gfx = gfxTarget(sys.longProperty(n.props, n.rel, "gfx_target_version"));
            String uniqueId = null;
            if (n.props.containsKey("unique_id")) {
                // the kernel prints the u64 unsigned: half of all ids are 2^63 and above
                long u = sys.unsignedLongProperty(n.props, n.rel, "unique_id");
                uniqueId = u == 0 ? null : hex(u, 16);
            }
            String dev = "class/drm/renderD" + minor + "/device/";
            // The partition modes, product name, PCI id and memory are the GPU's: read them once
            // per GPU, from its first agent (the PCI device; a partition's platform device may
            // lack them). Every partition of a GPU has the same memory: all of it (NPS1) or the
            // same share (NPS2, NPS4), as the modes are only ever combined evenly.
            String[] gpu = perGpu.get(pci);
            if (gpu == null) {
                Optional<String> compute = mode(sys, dev + "current_compute_partition", COMPUTE_MODES);
                Optional<String> memory = mode(sys, dev + "current_memory_partition", MEMORY_MODES);
                // plain calls, no lambdas: this runs at TaskManager start, where every new lambda costs a class
                Optional<String> rawId = sys.attribute(dev + "device");
                String deviceId = rawId.isPresent() ? Names.printable(rawId.get(), 16) : null;
                Optional<String> rawProduct = sys.attribute(dev + "product_name");
                String product = rawProduct.isPresent() ? Names.printable(rawProduct.get(), Names.MAX_NAME) : "";
                if (product.isEmpty()) {
                    product = "AMD GPU" + (deviceId == null ? "" : " " + deviceId);
                }
                // a size beyond any device (or below 0) is a damaged file, not a property
                long vram = sys.longAttribute(dev + "mem_info_vram_total", 0, HostValues.MAX_MEMORY_BYTES).orElse(-1L);
                gpu = new String[] {upper(compute), upper(memory), product, deviceId, Long.toString(vram)};
                perGpu.put(pci, gpu);
            }
            long vram = Long.parseLong(gpu[4]);
            Integer before = partitionsSeen.get(pci);
            int partition = before == null ? 0 : before;
            partitionsSeen.put(pci, partition + 1);
            gpus.add(new AmdGpu(index++, uniqueId, gpu[2], vram, pci, gfx, minor, gpu[0], gpu[1], partition, gpu[3]));
        }
        return gpus.isEmpty() ? gpus : usable(gpus);
    }

    /**
     * The attributes {@link #agents} reads from each agent's render node device folder; a node whose
     * {@code drm_render_minor} is missing or out of range is skipped here and reported when read.
     */
    private static List<String> deviceAttributes(List<Node> nodes) {
        List<String> out = new ArrayList<>();
        for (Node n : nodes) {
            long minor;
            try {
                minor = Long.parseLong(n.props.getOrDefault("drm_render_minor", "-1").strip());
            } catch (NumberFormatException e) {
                continue;
            }
            if (minor < 0 || minor > MAX_MINOR) {
                continue;
            }
            String dev = "class/drm/renderD" + minor + "/device/";
            for (String a : DEVICE_ATTRIBUTES) {
                out.add(dev + a);
            }
        }
        return out;
    }

    /** Why the shortfall of agents may be, for the driver's message; empty when nothing was skipped. */
    @Override
    public String skipped() {
        return skipped;
    }

    /**
     * A partition mode file: empty or missing means the kernel does not say; anything else must be
     * one of {@code modes} (case ignored), or a garbage value would pass for a partition profile.
     */
    private Optional<String> mode(Sysfs sys, String relative, List<String> modes) throws DeviceDriverException {
        Optional<String> v = sys.attribute(relative);
        if (v.isPresent() && !v.get().isEmpty() && !modes.contains(v.get().toUpperCase(Locale.ROOT))) {
            throw new DeviceDriverException(
                    describe() + ": " + sys.resolve(relative) + " is '" + Names.printable(v.get(), 40)
                            + "'; expected one of " + String.join(", ", modes) + " (a damaged file?)");
        }
        return v;
    }

    private static String upper(Optional<String> s) {
        return s.filter(v -> !v.isEmpty()).map(v -> v.toUpperCase(Locale.ROOT)).orElse(null);
    }

    /**
     * The agents this process can open. A container sees every GPU of the host in sysfs but only
     * the render nodes it was given (AMD's Kubernetes device plugin mounts those of the allocated
     * GPUs); ROCm numbers only the agents it can open, and so does this.
     */
    private List<AmdGpu> usable(List<AmdGpu> gpus) throws DeviceDriverException {
        Path kfd = devRoot.resolve("kfd");
        if (!Files.exists(kfd)) {
            throw new DeviceDriverException(
                    devKey + " (" + devRoot + "): " + kfd + " does not exist, but sysfs lists " + gpus.size()
                            + " AMD GPU agents; expected the KFD device, which every ROCm process opens. A"
                            + " container needs --device=/dev/kfd (Kubernetes: AMD's device plugin adds it)");
        }
        List<AmdGpu> out = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        Set<String> renderNodes = renderNodes();
        for (AmdGpu g : gpus) {
            Path node = devRoot.resolve("dri/renderD" + g.renderMinor);
            if (renderNodes.contains("renderD" + g.renderMinor)) {
                out.add(new AmdGpu(out.size(), g.uniqueId, g.productName, g.vramBytes, g.pciAddress, g.gfxTarget,
                        g.renderMinor, g.computePartition, g.memoryPartition, g.partitionIndex, g.deviceId));
            } else {
                missing.add(g.pciAddress + (g.partitioned() ? " partition " + g.partitionIndex : "") + " (" + node + ")");
            }
        }
        if (!missing.isEmpty()) {
            LOG.info("{} of {} AMD GPU agents in sysfs have no render node under {} (not given to this"
                    + " container): {}", missing.size(), gpus.size(), devRoot, missing);
        }
        if (out.isEmpty()) {
            throw new DeviceDriverException(
                    devKey + " (" + devRoot + "): none of the " + gpus.size() + " AMD GPU agents in sysfs has"
                            + " its render node here: " + missing + "; expected the render nodes this"
                            + " container was given (--device=/dev/dri/renderD<N>; Kubernetes: request"
                            + " amd.com/gpu so that AMD's device plugin mounts them)");
        }
        return out;
    }

    /** {@code value} as at least {@code digits} lower-case hex digits (String.format is slow here). */
    private static String hex(long value, int digits) {
        String h = Long.toHexString(value);
        return h.length() >= digits ? h : "0".repeat(digits - h.length()) + h;
    }

    /** The names in {@code <dev.root>/dri}: one listing instead of a look per agent. */
    private Set<String> renderNodes() {
        Set<String> names = new HashSet<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(devRoot.resolve("dri"))) {
            for (Path p : entries) {
                names.add(p.getFileName().toString());
            }
        } catch (IOException e) {
            // no dri folder: no render node, which the caller reports
        }
        return names;
    }

    /** {@code 90402} -> {@code gfx942}, {@code 90010} -> {@code gfx90a}, {@code 110000} -> {@code gfx1100}. */
    static String gfxTarget(long version) {
        if (version <= 0) {
            return null;
        }
        long major = version / 10000;
        long minor = (version / 100) % 100;
        long stepping = version % 100;
        return "gfx" + major + Long.toHexString(minor) + Long.toHexString(stepping);
    }

    private static final class Node {
        final String name;
        final String rel;
        final Map<String, String> props;

        Node(String name, String rel, Map<String, String> props) {
            this.name = name;
            this.rel = rel;
            this.props = props;
        }
    }
}
