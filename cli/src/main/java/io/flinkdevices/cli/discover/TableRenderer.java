package io.flinkdevices.cli.discover;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Writes a report for a person at a terminal: where Flink's files are, one line per resource, a
 * table of devices per resource, then every problem with the key to fix.
 */
public final class TableRenderer {

    private static final String NONE = "-";
    private static final String GAP = "  ";

    private TableRenderer() {}

    /** Writes {@code report} to {@code out}. */
    public static void render(DiscoveryReport report, PrintWriter out) {
        String plugins =
                report.pluginIds().isEmpty() ? "no plugins" : String.join(", ", report.pluginIds());
        table(
                List.of(
                        List.of("Flink configuration", report.configFile().toString()),
                        List.of(
                                "Plugins directory",
                                report.pluginsDir()
                                        + " (from "
                                        + report.pluginsDirOrigin()
                                        + "): "
                                        + plugins)),
                "",
                out);
        out.println();

        List<ResourceReport> resources = report.resources();
        if (resources.isEmpty()) {
            out.println(
                    "No external resources configured: external-resources is not set or is 'none'"
                            + " in "
                            + report.configFile()
                            + ".");
        } else {
            List<List<String>> rows = new ArrayList<>();
            rows.add(List.of("RESOURCE", "STATUS", "AMOUNT", "DEVICES", "FACTORY"));
            for (ResourceReport r : resources) {
                rows.add(
                        List.of(
                                r.name(),
                                r.status().label(),
                                r.amount() == null ? NONE : r.amount().toString(),
                                r.ok() || !r.infos().isEmpty()
                                        ? Integer.toString(r.infos().size())
                                        : NONE,
                                r.factory() == null ? NONE : r.factory()));
            }
            table(rows, "", out);
        }

        for (ResourceReport r : resources) {
            if (r.infos().isEmpty()) {
                continue;
            }
            out.println();
            out.println(
                    r.name()
                            + ": "
                            + r.infos().size()
                            + (r.infos().size() == 1 ? " device" : " devices"));
            table(deviceRows(r.infos()), GAP, out);
            r.notes().forEach(n -> out.println("  " + n));
            if (r.availability() != null) {
                out.println("  " + r.availability().summary());
            }
        }

        boolean problems = false;
        for (ResourceReport r : resources) {
            if (r.problems().isEmpty()) {
                continue;
            }
            if (!problems) {
                out.println();
                out.println("Problems:");
                problems = true;
            }
            for (String problem : r.problems()) {
                out.println(GAP + r.name() + ": " + problem);
            }
        }
        if (!report.pluginProblems().isEmpty()) {
            out.println();
            out.println("Plugin problems:");
            report.pluginProblems().forEach(p -> out.println(GAP + p));
        }

        out.println();
        long ok = resources.stream().filter(ResourceReport::ok).count();
        if (report.allOk()) {
            out.println(
                    resources.isEmpty()
                            ? "Nothing to discover."
                            : "All " + resources.size() + " resources ok.");
        } else {
            out.println(ok + " of " + resources.size() + " resources ok.");
        }
        out.flush();
    }

    /**
     * The infos' keys as columns; memory ({@code memory-bytes}, {@code global-memory-bytes}) in
     * GiB under the key without {@code -bytes}, for a person (JSON keeps the bytes).
     */
    private static List<List<String>> deviceRows(List<Map<String, String>> infos) {
        Set<String> keys = new LinkedHashSet<>();
        infos.forEach(info -> keys.addAll(info.keySet()));
        List<List<String>> rows = new ArrayList<>();
        List<String> header = new ArrayList<>();
        keys.forEach(k -> header.add(isMemory(k) ? k.substring(0, k.length() - BYTES.length()) : k));
        rows.add(header);
        for (Map<String, String> info : infos) {
            List<String> row = new ArrayList<>();
            for (String key : keys) {
                String value = info.get(key);
                row.add(value == null || value.isEmpty() ? NONE : isMemory(key) ? gib(value) : value);
            }
            rows.add(row);
        }
        return rows;
    }

    private static final String BYTES = "-bytes";

    private static boolean isMemory(String key) {
        return key.endsWith("memory" + BYTES);
    }

    /** {@code 17179869184} as {@code 16 GiB}, {@code 85899345920} as {@code 80 GiB}, odd sizes with one decimal. */
    static String gib(String bytes) {
        try {
            double g = Long.parseLong(bytes) / (double) (1L << 30);
            return (g == Math.rint(g) ? String.format(java.util.Locale.ROOT, "%.0f", g) : String.format(java.util.Locale.ROOT, "%.1f", g))
                    + " GiB";
        } catch (NumberFormatException e) {
            return bytes;
        }
    }

    /** Left-aligned columns two spaces apart, without trailing blanks. */
    private static void table(List<List<String>> rows, String indent, PrintWriter out) {
        int columns = rows.stream().mapToInt(List::size).max().orElse(0);
        int[] widths = new int[columns];
        for (List<String> row : rows) {
            for (int i = 0; i < row.size(); i++) {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        for (List<String> row : rows) {
            StringBuilder line = new StringBuilder(indent);
            for (int i = 0; i < row.size(); i++) {
                if (i > 0) {
                    line.append(GAP);
                }
                line.append(row.get(i));
                if (i < row.size() - 1) {
                    line.append(" ".repeat(widths[i] - row.get(i).length()));
                }
            }
            out.println(line.toString().stripTrailing());
        }
    }
}
