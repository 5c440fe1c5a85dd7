package io.flinkdevices.rdma;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The operator's selectors, as the Kubernetes RDMA shared device plugin names them (device name
 * pattern, link layer, minimum rate, netdevs, PCI vendor and device ids), plus health: only ports
 * that are ACTIVE and LinkUp (or, degraded, ACTIVE and LinkErrorRecovery), with a GID of the wanted
 * type, are offered. Each port that is not
 * offered gets the reason.
 */
final class Selection {

    /** The {@code link-layer} parameter. */
    enum LinkLayer {
        ANY,
        INFINIBAND,
        ETHERNET
    }

    private final Pattern devicePattern;
    private final LinkLayer linkLayer;
    private final long minRateGbps;
    private final List<String> netdevs;
    private final List<String> vendorIds;
    private final List<String> deviceIds;
    private final GidChoice.Type gidType;

    Selection(Pattern devicePattern, LinkLayer linkLayer, long minRateGbps, List<String> netdevs,
            List<String> vendorIds, List<String> deviceIds, GidChoice.Type gidType) {
        this.devicePattern = devicePattern;
        this.linkLayer = linkLayer;
        this.minRateGbps = minRateGbps;
        this.netdevs = List.copyOf(netdevs);
        this.vendorIds = normalized(vendorIds);
        this.deviceIds = normalized(deviceIds);
        this.gidType = gidType;
    }

    /** {@code 0x15B3} and {@code 15b3} alike. */
    static String pciId(String id) {
        String s = id.strip().toLowerCase(Locale.ROOT);
        return s.startsWith("0x") ? s.substring(2) : s;
    }

    private static List<String> normalized(List<String> ids) {
        return ids.stream().map(Selection::pciId).collect(java.util.stream.Collectors.toList());
    }

    /** Why {@code p} is not offered; empty when it is. */
    Optional<String> rejection(RdmaPort p) {
        if (!devicePattern.matcher(p.device).matches()) {
            return Optional.of("device name does not match device.pattern " + devicePattern.pattern());
        }
        if (linkLayer != LinkLayer.ANY && !p.linkLayer.equalsIgnoreCase(linkLayer.name())) {
            return Optional.of("link layer " + p.linkLayer + ", not " + linkLayer.name().toLowerCase(Locale.ROOT));
        }
        if (!vendorIds.isEmpty() && (p.pciVendor == null || !vendorIds.contains(pciId(p.pciVendor)))) {
            return Optional.of("PCI vendor " + p.pciVendor + " is not one of pci.vendor-ids " + vendorIds);
        }
        if (!deviceIds.isEmpty() && (p.pciDevice == null || !deviceIds.contains(pciId(p.pciDevice)))) {
            return Optional.of("PCI device " + p.pciDevice + " is not one of pci.device-ids " + deviceIds);
        }
        if (!p.healthy() && !p.degraded()) {
            return Optional.of("port is " + p.state + "/" + p.physState + ", not ACTIVE/LinkUp (nor ACTIVE/"
                    + RdmaPort.ERROR_RECOVERY + ", offered last)");
        }
        if (p.rateGbps >= 0 && p.rateGbps < minRateGbps) {
            return Optional.of("rate " + p.rateGbps + " Gb/s is below min-rate " + minRateGbps + " Gb/s");
        }
        if (p.gid == null) {
            String what = gidType == GidChoice.Type.AUTO ? "no GID in use" : "no GID of gid.type " + gidType.name().toLowerCase(Locale.ROOT).replace('_', '-');
            return Optional.of(netdevs.isEmpty() ? what : what + " on netdevs " + netdevs);
        }
        if (!netdevs.isEmpty() && (p.netdev == null || !netdevs.contains(p.netdev))) {
            return Optional.of("netdev " + p.netdev + " is not one of netdevs " + netdevs);
        }
        return Optional.empty();
    }
}
