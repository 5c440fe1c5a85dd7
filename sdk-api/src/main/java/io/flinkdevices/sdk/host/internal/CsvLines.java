package io.flinkdevices.sdk.host.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits one line of a tool's comma-separated output into fields: blanks around a field dropped
 * ({@code nvidia-smi} prints {@code ", "}), a field in double quotes may hold commas and {@code ""}
 * for a quote (RFC 4180, within one line: no tool prints a line break inside a field).
 */
public final class CsvLines {

    private CsvLines() {
    }

    /**
     * The fields of {@code line}; null when a quoted field is not closed.
     */
    public static List<String> split(String line) {
        List<String> fields = new ArrayList<>();
        int i = 0;
        int n = line.length();
        while (true) {
            while (i < n && line.charAt(i) == ' ') {
                i++;
            }
            if (i < n && line.charAt(i) == '"') {
                StringBuilder b = new StringBuilder();
                i++;
                boolean closed = false;
                while (i < n) {
                    char c = line.charAt(i++);
                    if (c == '"') {
                        if (i < n && line.charAt(i) == '"') {
                            b.append('"');
                            i++;
                        } else {
                            closed = true;
                            break;
                        }
                    } else {
                        b.append(c);
                    }
                }
                if (!closed) {
                    return null;
                }
                while (i < n && line.charAt(i) == ' ') {
                    i++;
                }
                if (i < n && line.charAt(i) != ',') {
                    return null; // text after a closing quote: not a field this splitter can read
                }
                fields.add(b.toString());
            } else {
                int comma = line.indexOf(',', i);
                int end = comma < 0 ? n : comma;
                fields.add(line.substring(i, end).strip());
                i = end;
            }
            if (i >= n) {
                return fields;
            }
            i++; // the comma
        }
    }
}
