package io.flinkdevices.rdma;

import java.util.List;
import java.util.Locale;

/**
 * Which GID of a port a task should use. RoCE v2 first: it is routable (UDP/IP), which RoCE v1
 * (Ethernet frames only) is not, and it is what current NICs and switches are configured for. Among
 * those, an IPv4-mapped GID ({@code ::ffff:a.b.c.d}) first: most data-center fabrics address RoCE
 * by IPv4, and a link-local GID ({@code fe80::}) reaches only its own L2 segment. On InfiniBand the
 * lowest index (0: the port's default GID from its GUID). The {@code gid.type} parameter may ask
 * for one type only.
 */
final class GidChoice {

    /** The {@code gid.type} parameter. */
    enum Type {
        /** RoCE v2, then RoCE v1 / InfiniBand. */
        AUTO,
        /** Only RoCE v2 GIDs. */
        ROCE_V2,
        /** Only RoCE v1 / InfiniBand GIDs. */
        ROCE_V1
    }

    /** One entry of a GID table in use. */
    static final class Entry {
        final int index;
        final String gid;
        final String type;
        final String netdev;

        Entry(int index, String gid, String type, String netdev) {
            this.index = index;
            this.gid = gid;
            this.type = type;
            this.netdev = netdev;
        }

        boolean rocev2() {
            return type != null && type.toLowerCase(Locale.ROOT).contains("v2");
        }

        boolean ipv4Mapped() {
            return gid.startsWith("0000:0000:0000:0000:0000:ffff:");
        }
    }

    /** The chosen GID. */
    static final class Chosen {
        final int index;
        final String gid;
        final String type;
        final String netdev;

        Chosen(Entry e) {
            this.index = e.index;
            this.gid = e.gid;
            this.type = e.type;
            this.netdev = e.netdev;
        }
    }

    private final Type wanted;
    private final List<String> netdevs;

    /**
     * @param netdevs the {@code netdevs} selector: when not empty, only GIDs on these interfaces
     *     count, so that a better GID on another interface (a VLAN on the same port, say) does not
     *     hide the port's GID on a wanted one
     */
    GidChoice(Type wanted, List<String> netdevs) {
        this.wanted = wanted;
        this.netdevs = List.copyOf(netdevs);
    }

    /**
     * The best entry, or null when none is in use or none has the wanted type (on a wanted netdev).
     * A plain loop, no stream: this runs at TaskManager start, where every new lambda costs a class.
     */
    Chosen choose(List<Entry> entries) {
        Entry best = null;
        for (Entry e : entries) {
            boolean onWantedNetdev = netdevs.isEmpty() || (e.netdev != null && netdevs.contains(e.netdev));
            boolean wantedType = wanted == Type.AUTO || (wanted == Type.ROCE_V2) == e.rocev2();
            if (onWantedNetdev && wantedType && (best == null || better(e, best))) {
                best = e;
            }
        }
        return best == null ? null : new Chosen(best);
    }

    /** RoCE v2 before v1, then IPv4-mapped before the rest, then the lower index. */
    private static boolean better(Entry a, Entry b) {
        if (a.rocev2() != b.rocev2()) {
            return a.rocev2();
        }
        if (a.ipv4Mapped() != b.ipv4Mapped()) {
            return a.ipv4Mapped();
        }
        return a.index < b.index;
    }
}
