package io.flinkdevices.rdma;

/** One (device, port) pair as sysfs describes it, with the GID the driver chose. */
final class RdmaPort {

    final String device;
    final int port;
    /** {@code ACTIVE}, {@code DOWN}, ... (the text after {@code "4: "}). */
    final String state;
    /** {@code LinkUp}, {@code Disabled}, ... */
    final String physState;
    /** {@code InfiniBand} or {@code Ethernet}. */
    final String linkLayer;
    /** Gb/s, or -1 where sysfs has no rate. */
    final long rateGbps;
    final String nodeGuid;
    final String pciAddress;
    /** e.g. {@code 0x15b3}, or null. */
    final String pciVendor;
    /** e.g. {@code 0x101b}, or null. */
    final String pciDevice;
    /** -1 where the platform has none. */
    final int numaNode;
    /** The chosen GID, its index, type and netdev; gid null when the port has none. */
    final String gid;
    final int gidIndex;
    final String gidType;
    final String netdev;

    RdmaPort(String device, int port, String state, String physState, String linkLayer, long rateGbps,
            String nodeGuid, String pciAddress, String pciVendor, String pciDevice, int numaNode,
            String gid, int gidIndex, String gidType, String netdev) {
        this.device = device;
        this.port = port;
        this.state = state;
        this.physState = physState;
        this.linkLayer = linkLayer;
        this.rateGbps = rateGbps;
        this.nodeGuid = nodeGuid;
        this.pciAddress = pciAddress;
        this.pciVendor = pciVendor;
        this.pciDevice = pciDevice;
        this.numaNode = numaNode;
        this.gid = gid;
        this.gidIndex = gidIndex;
        this.gidType = gidType;
        this.netdev = netdev;
    }

    /** A port as sysfs describes it, before its GID is chosen. */
    static final class Builder {
        /** Its folder, {@code class/infiniband/<dev>/ports/<n>/}. */
        final String folder;
        private final RdmaPort withoutGid;

        Builder(String folder, String device, int port, String state, String physState, String linkLayer, long rateGbps,
                String nodeGuid, String pciAddress, String pciVendor, String pciDevice, int numaNode) {
            this.folder = folder;
            this.withoutGid = new RdmaPort(device, port, state, physState, linkLayer, rateGbps, nodeGuid, pciAddress,
                    pciVendor, pciDevice, numaNode, null, -1, null, null);
        }

        /** The port with {@code gid}, or with none when it is null. */
        RdmaPort gid(GidChoice.Chosen gid) {
            RdmaPort p = withoutGid;
            return gid == null ? p : new RdmaPort(p.device, p.port, p.state, p.physState, p.linkLayer, p.rateGbps,
                    p.nodeGuid, p.pciAddress, p.pciVendor, p.pciDevice, p.numaNode, gid.gid, gid.index, gid.type, gid.netdev);
        }
    }

    /** {@code mlx5_0/1}: the id in the coordination file and in messages. */
    String id() {
        return device + "/" + port;
    }

    /** Whether traffic can flow: ACTIVE and LinkUp. */
    boolean healthy() {
        return "ACTIVE".equals(state) && "LinkUp".equals(physState);
    }

    /**
     * Whether traffic flows, but not well: ACTIVE while the physical link is in {@value
     * #ERROR_RECOVERY} (InfiniBand's PortPhysicalState 6: the link retrains after symbol errors and
     * keeps its logical state). Offered after every healthy port, never quarantined.
     */
    boolean degraded() {
        return "ACTIVE".equals(state) && ERROR_RECOVERY.equals(physState);
    }

    /** The physical state of a link that recovers from errors ({@code 6: LinkErrorRecovery}). */
    static final String ERROR_RECOVERY = "LinkErrorRecovery";

    @Override
    public String toString() {
        return id() + " (" + linkLayer + ", " + state + "/" + physState + (rateGbps >= 0 ? ", " + rateGbps + " Gb/s" : "")
                + (netdev == null ? "" : ", " + netdev) + ")";
    }
}
