package io.flinkdevices.sdk.info;

import io.flinkdevices.sdk.internal.InfoProperties;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * One RDMA port (a device and port pair such as {@code mlx5_0} port 1) handed to a TaskManager.
 *
 * <p>Identified by device and port. Read it in job code with {@link #from(ExternalResourceInfo)}.
 */
@PublicEvolving
public final class RdmaInfo extends DeviceInfoBase {

    private static final long serialVersionUID = 1L;

    /** Property holding the device kind, always {@value #KIND}. */
    public static final String KEY_KIND = "kind";
    /** The value of {@link #KEY_KIND} for RDMA ports. */
    public static final String KIND = "rdma";
    /** Verbs device name, for example {@code mlx5_0}. Required. */
    public static final String KEY_DEVICE = "device";
    /** Port number, starting at 1. Required. */
    public static final String KEY_PORT = "port";
    /** {@code InfiniBand} or {@code Ethernet} (RoCE). */
    public static final String KEY_LINK_LAYER = "link-layer";
    /** Port state, for example {@code ACTIVE}. */
    public static final String KEY_STATE = "state";
    /** The GID the driver chose for this port. */
    public static final String KEY_GID = "gid";
    /** GID type, for example {@code IB/RoCE v1} or {@code RoCE v2}. */
    public static final String KEY_GID_TYPE = "gid-type";
    /** Network interface bound to the port, for example {@code ens1f0}. */
    public static final String KEY_NETDEV = "netdev";
    /** Node GUID of the adapter. */
    public static final String KEY_NODE_GUID = "node-guid";
    /** Index of the chosen GID in the port's GID table (what verbs calls {@code sgid_index}). */
    public static final String KEY_GID_INDEX = "gid-index";
    /** PCI address of the adapter, {@code domain:bus:device.function}. */
    public static final String KEY_PCI_ADDRESS = "pci-address";
    /** NUMA node of the adapter; absent where the platform has none. */
    public static final String KEY_NUMA_NODE = "numa-node";
    /** Port rate in Gb/s, as sysfs {@code rate} says it ({@code 100 Gb/sec (4X EDR)} is 100). */
    public static final String KEY_RATE_GBPS = "rate-gbps";

    private final String device;
    private final int port;
    private final String linkLayer;
    private final String state;
    private final String gid;
    private final String gidType;
    private final String netdev;
    private final String nodeGuid;
    private final int gidIndex;
    private final String pciAddress;
    private final int numaNode;
    private final long rateGbps;

    private RdmaInfo(Builder b) {
        attachLive(b.live);
        if (b.device == null || b.device.isBlank()) {
            throw new IllegalArgumentException("RDMA " + KEY_DEVICE + " must not be blank");
        }
        if (b.port < 1) {
            throw new IllegalArgumentException("RDMA " + KEY_PORT + " must be >= 1 but is " + b.port);
        }
        this.device = b.device.trim();
        this.port = b.port;
        this.linkLayer = blankToNull(b.linkLayer);
        this.state = blankToNull(b.state);
        this.gid = blankToNull(b.gid);
        this.gidType = blankToNull(b.gidType);
        this.netdev = blankToNull(b.netdev);
        this.nodeGuid = blankToNull(b.nodeGuid);
        this.gidIndex = b.gidIndex;
        this.pciAddress = blankToNull(b.pciAddress);
        this.numaNode = b.numaNode;
        this.rateGbps = b.rateGbps;
    }

    /** Starts an RDMA port description; device and port are required. */
    public static Builder builder(String device, int port) {
        return new Builder(device, port);
    }

    /**
     * Reads an {@code RdmaInfo} from any {@link ExternalResourceInfo}, including one created by a
     * plugin class loader.
     *
     * @throws IllegalArgumentException naming the missing or malformed property, or the other
     *     kind when the info's {@code kind} property names another kind of device
     */
    public static RdmaInfo from(ExternalResourceInfo info) {
        if (info instanceof RdmaInfo) {
            return (RdmaInfo) info;
        }
        InfoProperties.Reader r =
                new InfoProperties.Reader(info, "RdmaInfo").requireKind(KEY_KIND, KIND);
        long port = r.requiredLong(KEY_PORT);
        Builder b =
                builder(r.required(KEY_DEVICE), InfoProperties.toIntIndex("RdmaInfo", KEY_PORT, port))
                        .linkLayer(r.optional(KEY_LINK_LAYER))
                        .state(r.optional(KEY_STATE))
                        .gid(r.optional(KEY_GID), r.optional(KEY_GID_TYPE))
                        .netdev(r.optional(KEY_NETDEV))
                        .nodeGuid(r.optional(KEY_NODE_GUID))
                        .pciAddress(r.optional(KEY_PCI_ADDRESS));
        r.optionalLong(KEY_GID_INDEX).ifPresent(v -> b.gidIndex(InfoProperties.toIntIndex("RdmaInfo", KEY_GID_INDEX, v)));
        r.optionalLong(KEY_NUMA_NODE).ifPresent(v -> b.numaNode(InfoProperties.toIntIndex("RdmaInfo", KEY_NUMA_NODE, v)));
        r.optionalLong(KEY_RATE_GBPS).ifPresent(b::rateGbps);
        return b.live(LiveProperties.of(info)).build();
    }

    /** Verbs device name. */
    public String getDevice() {
        return device;
    }

    /** Port number. */
    public int getPort() {
        return port;
    }

    /** Link layer, when known. */
    public Optional<String> getLinkLayer() {
        return Optional.ofNullable(linkLayer);
    }

    /** Port state, when known. */
    public Optional<String> getState() {
        return Optional.ofNullable(state);
    }

    /** Chosen GID, when known. */
    public Optional<String> getGid() {
        return Optional.ofNullable(gid);
    }

    /** GID type, when known. */
    public Optional<String> getGidType() {
        return Optional.ofNullable(gidType);
    }

    /** Bound network interface, when known. */
    public Optional<String> getNetdev() {
        return Optional.ofNullable(netdev);
    }

    /** Node GUID, when known. */
    public Optional<String> getNodeGuid() {
        return Optional.ofNullable(nodeGuid);
    }

    /** Index of the chosen GID in the port's GID table. */
    public OptionalInt getGidIndex() {
        return gidIndex < 0 ? OptionalInt.empty() : OptionalInt.of(gidIndex);
    }

    /** PCI address of the adapter. */
    public Optional<String> getPciAddress() {
        return Optional.ofNullable(pciAddress);
    }

    /** NUMA node of the adapter. */
    public OptionalInt getNumaNode() {
        return numaNode < 0 ? OptionalInt.empty() : OptionalInt.of(numaNode);
    }

    /** Port rate in Gb/s. */
    public OptionalLong getRateGbps() {
        return rateGbps < 0 ? OptionalLong.empty() : OptionalLong.of(rateGbps);
    }

    @Override
    Map<String, String> buildProperties() {
        return new InfoProperties()
                .put(KEY_KIND, KIND)
                .put(KEY_DEVICE, device)
                .put(KEY_PORT, port)
                .put(KEY_LINK_LAYER, linkLayer)
                .put(KEY_STATE, state)
                .put(KEY_GID, gid)
                .put(KEY_GID_TYPE, gidType)
                .put(KEY_NETDEV, netdev)
                .put(KEY_NODE_GUID, nodeGuid)
                .putIfNonNegative(KEY_GID_INDEX, gidIndex)
                .put(KEY_PCI_ADDRESS, pciAddress)
                .putIfNonNegative(KEY_NUMA_NODE, numaNode)
                .putIfNonNegative(KEY_RATE_GBPS, rateGbps)
                .freeze();
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof RdmaInfo)) {
            return false;
        }
        RdmaInfo that = (RdmaInfo) o;
        return port == that.port && device.equals(that.device);
    }

    @Override
    public int hashCode() {
        return Objects.hash(device, port);
    }

    /** Builds an {@link RdmaInfo}. */
    @PublicEvolving
    public static final class Builder {
        private LiveProperties live;

        /**
         * The device's live keys ({@code health}, {@code metric.*}), usually {@code
         * DeviceMonitor.properties(id)}; they take no part in equality.
         */
        public Builder live(LiveProperties live) {
            this.live = live;
            return this;
        }

        private final String device;
        private final int port;
        private String linkLayer;
        private String state;
        private String gid;
        private String gidType;
        private String netdev;
        private String nodeGuid;
        private int gidIndex = -1;
        private String pciAddress;
        private int numaNode = -1;
        private long rateGbps = -1;

        private Builder(String device, int port) {
            this.device = device;
            this.port = port;
        }

        /** Link layer. */
        public Builder linkLayer(String linkLayer) {
            this.linkLayer = linkLayer;
            return this;
        }

        /** Port state. */
        public Builder state(String state) {
            this.state = state;
            return this;
        }

        /** Chosen GID and its type. */
        public Builder gid(String gid, String gidType) {
            this.gid = gid;
            this.gidType = gidType;
            return this;
        }

        /** Bound network interface. */
        public Builder netdev(String netdev) {
            this.netdev = netdev;
            return this;
        }

        /** Node GUID. */
        public Builder nodeGuid(String nodeGuid) {
            this.nodeGuid = nodeGuid;
            return this;
        }

        /** Index of the chosen GID in the port's GID table (not negative). */
        public Builder gidIndex(int gidIndex) {
            if (gidIndex < 0) {
                throw new IllegalArgumentException("RDMA " + KEY_GID_INDEX + " must be >= 0 but is " + gidIndex);
            }
            this.gidIndex = gidIndex;
            return this;
        }

        /** PCI address of the adapter. */
        public Builder pciAddress(String pciAddress) {
            this.pciAddress = pciAddress;
            return this;
        }

        /** NUMA node of the adapter (not negative). */
        public Builder numaNode(int numaNode) {
            if (numaNode < 0) {
                throw new IllegalArgumentException("RDMA " + KEY_NUMA_NODE + " must be >= 0 but is " + numaNode);
            }
            this.numaNode = numaNode;
            return this;
        }

        /** Port rate in Gb/s (not negative). */
        public Builder rateGbps(long rateGbps) {
            if (rateGbps < 0) {
                throw new IllegalArgumentException("RDMA " + KEY_RATE_GBPS + " must be >= 0 but is " + rateGbps);
            }
            this.rateGbps = rateGbps;
            return this;
        }

        /**
         * Validates and builds.
         *
         * @throws IllegalArgumentException naming the invalid field
         */
        public RdmaInfo build() {
            return new RdmaInfo(this);
        }
    }
}
