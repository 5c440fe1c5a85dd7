package io.flinkdevices.cli.discover;

import io.flinkdevices.cli.common.JsonStyle;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;

/**
 * Writes a report as one JSON object, {@code {"resources": [...]}}, for scripts and monitoring.
 * Every resource has all six fields; absent values are {@code null}, {@code infos} is always a
 * list.
 */
public final class JsonRenderer {

    private JsonRenderer() {}

    /** Writes {@code report} and a final newline to {@code out}. */
    public static void render(DiscoveryReport report, PrintWriter out) {
        try {
            JsonStyle.WRITER.writeValue(out, new Document(report.resources()));
        } catch (IOException e) {
            throw new IllegalStateException("cannot write the report as JSON", e);
        }
        out.println();
        out.flush();
    }

    /** The document's shape: a single member, so fields can be added beside it later. */
    private record Document(List<ResourceReport> resources) {}
}
