package io.flinkdevices.cli.doctor;

import io.flinkdevices.cli.common.JsonStyle;


import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;

/** Writes a doctor report as a numbered list for a person, or as one JSON object. */
public final class DoctorRenderer {

    private DoctorRenderer() {}

    /** The report as a numbered list of findings, each with its key, problem and fix. */
    public static void text(DoctorReport report, PrintWriter out) {
        out.println("Flink configuration  " + report.configFile());
        out.println(
                "Plugins directory    "
                        + report.pluginsDir()
                        + " (from "
                        + report.pluginsDirOrigin()
                        + "): "
                        + (report.pluginIds().isEmpty()
                                ? "no plugins"
                                : String.join(", ", report.pluginIds())));
        out.println(
                "Resources            "
                        + (report.resources().isEmpty()
                                ? "none (external-resources is not set or is 'none')"
                                : String.join(", ", report.resources())));
        out.println();
        for (String note : report.notes()) {
            out.println("note: " + note);
        }
        if (!report.notes().isEmpty()) {
            out.println();
        }
        List<Finding> findings = report.findings();
        if (findings.isEmpty()) {
            out.println("No problems found.");
            out.flush();
            return;
        }
        int width = Integer.toString(findings.size()).length();
        for (int i = 0; i < findings.size(); i++) {
            Finding f = findings.get(i);
            String number = String.format("%" + width + "d. ", i + 1);
            out.println(number + "[" + f.severity().label() + "] " + f.key());
            String pad = " ".repeat(number.length());
            out.println(pad + f.problem());
            out.println(pad + "fix: " + f.fix());
            out.println();
        }
        long errors = report.count(Severity.ERROR);
        long warnings = report.count(Severity.WARNING);
        out.println(
                plural(errors, "error")
                        + ", "
                        + plural(warnings, "warning")
                        + " in "
                        + report.configFile());
        out.flush();
    }

    /** The report as {@code {"healthy": ..., "findings": [...]}}. */
    public static void json(DoctorReport report, PrintWriter out) {
        try {
            JsonStyle.WRITER.writeValue(
                    out,
                    new Document(
                            report.healthy(),
                            report.configFile().toString(),
                            report.pluginsDir().toString(),
                            report.resources(),
                            report.findings(),
                            report.notes()));
        } catch (IOException e) {
            throw new IllegalStateException("cannot write the report as JSON", e);
        }
        out.println();
        out.flush();
    }

    private static String plural(long n, String word) {
        return n + " " + word + (n == 1 ? "" : "s");
    }

    private record Document(
            boolean healthy,
            String configFile,
            String pluginsDir,
            List<String> resources,
            List<Finding> findings,
            List<String> notes) {}
}
