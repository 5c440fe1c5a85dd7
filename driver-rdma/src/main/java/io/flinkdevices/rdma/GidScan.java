package io.flinkdevices.rdma;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.Sysfs;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * One port's GID table, read a window at a time so that the reads of every port can be made
 * together ({@link Sysfs#readAhead}): each round reads what {@link #wanted()} names and hands the
 * reader to {@link #take}. The table is read up to {@link SysfsPorts#UNUSED_RUN_ENDS_TABLE} unused
 * entries in a row; of a used entry its {@code gid_attrs/types/<i>} and {@code gid_attrs/ndevs/<i>}
 * are read in the round after (the kernel answers EINVAL for those of an unused entry, so only
 * these are read).
 */
final class GidScan {

    /** GID entries read at a time: the used entries and the unused run after them, mostly. */
    static final int WINDOW = 2 * SysfsPorts.UNUSED_RUN_ENDS_TABLE;
    static final String ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000";

    private final String port;
    private final List<String> names;
    private int next;
    private int unusedInARow;
    /** Whether the last {@link #wanted()} named the window from {@link #next}. */
    private boolean windowWanted;
    /** Used entries whose attributes the next {@link #take} reads: index to GID. */
    private final Map<String, String> used = new LinkedHashMap<>();
    private final List<GidChoice.Entry> entries = new ArrayList<>();

    /**
     * @param port the port's folder, ending in {@code /}
     * @param names the numeric entries of its {@code gids/} folder in table order
     */
    GidScan(String port, List<String> names) {
        this.port = port;
        this.names = names;
    }

    /** The files the next round must read; empty when the table is read. */
    List<String> wanted() {
        List<String> paths = new ArrayList<>();
        for (String i : used.keySet()) {
            paths.add(port + "gid_attrs/types/" + i);
            paths.add(port + "gid_attrs/ndevs/" + i);
        }
        windowWanted = next < names.size() && unusedInARow < SysfsPorts.UNUSED_RUN_ENDS_TABLE;
        if (windowWanted) {
            for (int i = next; i < Math.min(names.size(), next + WINDOW); i++) {
                paths.add(port + "gids/" + names.get(i));
            }
        }
        return paths;
    }

    /** Takes a round that read at least {@link #wanted()}. */
    void take(Sysfs s) throws DeviceDriverException {
        for (Map.Entry<String, String> u : used.entrySet()) {
            Optional<String> type = s.attribute(port + "gid_attrs/types/" + u.getKey());
            Optional<String> ndev = s.attribute(port + "gid_attrs/ndevs/" + u.getKey());
            entries.add(new GidChoice.Entry(Integer.parseInt(u.getKey()), u.getValue().toLowerCase(Locale.ROOT),
                    type.orElse(null), ndev.filter(n -> !n.isEmpty()).orElse(null)));
        }
        used.clear();
        if (!windowWanted) {
            return;
        }
        int end = Math.min(names.size(), next + WINDOW);
        for (; next < end && unusedInARow < SysfsPorts.UNUSED_RUN_ENDS_TABLE; next++) {
            String i = names.get(next);
            String gid = s.requireAttribute(port + "gids/" + i);
            if (!SysfsPorts.isGid(gid)) {
                throw new DeviceDriverException(s.resolve(port + "gids/" + i) + " is '" + SysfsPorts.abbreviate(gid)
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
    }

    /** The GIDs in use, in table order, once {@link #wanted()} is empty. */
    List<GidChoice.Entry> entries() {
        return entries;
    }
}
