package io.flinkdevices.sdk.host;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.internal.CsvLines;
import io.flinkdevices.sdk.host.internal.JsonReader;
import io.flinkdevices.sdk.host.internal.SysfsErrors;
import io.flinkdevices.sdk.process.ExternalCommand;

import org.apache.flink.annotation.PublicEvolving;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads what a vendor tool printed, JSON or CSV, into {@link ToolRecord}s whose getters check
 * each field. No JSON library is needed in the plugin jar: sdk-api's own reader is strict
 * (RFC 8259; a field twice in one object is refused), bounded in input ({@link #MAX_CHARS}) and
 * nesting ({@link #MAX_DEPTH}), and every failure is one {@link DeviceDriverException} starting
 * with the tool, then what is wrong, where, and what was expected.
 *
 * <pre>{@code
 * ExternalCommand.Result r = ExternalCommand.of(tool, List.of("list", "--json"), timeout, key).run();
 * ToolRecord root = ToolOutput.json(tool + " list --json (" + key + ")", r.stdout());
 * List<ToolRecord> rows = ToolOutput.csv("nvidia-smi", r.stdout(), List.of("index", "uuid", "memory.total"));
 * }</pre>
 */
@PublicEvolving
public final class ToolOutput {

    /** The longest output read: what {@link ExternalCommand} keeps of a tool's stdout. */
    public static final int MAX_CHARS = ExternalCommand.STDOUT_LIMIT_BYTES;

    /** The deepest JSON read: vendor tools print a few levels; deeper is garbage or hostile. */
    public static final int MAX_DEPTH = 64;

    /** The most CSV columns read. */
    public static final int MAX_COLUMNS = 256;

    private ToolOutput() {
    }

    /**
     * The one JSON document {@code text} holds.
     *
     * @param tool the tool as messages name it, with its config key ({@code /opt/hexa/bin/hexa-smi
     *     list --json (external-resource.hexa.param.hexa-smi.path)})
     * @throws DeviceDriverException when {@code text} is empty, longer than {@link #MAX_CHARS},
     *     broken or truncated JSON, nested deeper than {@link #MAX_DEPTH}, or followed by more text
     */
    public static ToolRecord json(String tool, String text) throws DeviceDriverException {
        checkSize(tool, text, "JSON");
        if (text.isBlank()) {
            throw new DeviceDriverException(tool + " printed no JSON; expected a JSON document");
        }
        try {
            return ToolRecord.root(tool, JsonReader.read(text, MAX_DEPTH));
        } catch (JsonReader.Failure f) {
            String where = " at line " + f.line() + ", column " + f.column();
            switch (f.kind()) {
                case TRAILING:
                    throw new DeviceDriverException(tool + " printed more after its JSON document (" + where.strip() + ": '"
                            + SysfsErrors.abbreviate(f.rest()) + "'); expected one JSON document and nothing after it");
                case DEPTH:
                    throw new DeviceDriverException(tool + " printed JSON that cannot be read (" + f.getMessage() + where
                            + "); expected at most " + MAX_DEPTH + " levels of objects and lists");
                default:
                    throw new DeviceDriverException(tool + " printed JSON that cannot be read (" + f.getMessage() + where
                            + "); expected a whole JSON document (truncated output?); it begins with: "
                            + SysfsErrors.abbreviate(text.strip()));
            }
        }
    }

    /**
     * The lines of comma-separated {@code text} without a header line ({@code nvidia-smi
     * --format=csv,noheader}), each a record of {@code columns}, named {@code line 1}, {@code line
     * 2}, ... as its device; blank lines are skipped, blanks around fields dropped, double-quoted
     * fields may hold commas.
     *
     * @throws DeviceDriverException when {@code text} is longer than {@link #MAX_CHARS}, or a line
     *     has another number of fields than {@code columns} (truncated output?) or an open quote
     */
    public static List<ToolRecord> csv(String tool, String text, List<String> columns) throws DeviceDriverException {
        checkSize(tool, text, "CSV");
        if (columns.isEmpty() || columns.size() > MAX_COLUMNS) {
            throw new IllegalArgumentException("1 to " + MAX_COLUMNS + " columns expected, got " + columns.size());
        }
        return rows(tool, text.split("\r?\n|\r", -1), 0, columns);
    }

    /**
     * The lines of comma-separated {@code text} whose first non-blank line names the columns
     * ({@code nvidia-smi --format=csv}: {@code index, uuid, memory.total [MiB]}), as {@link #csv}.
     *
     * @throws DeviceDriverException as {@link #csv}, or when there is no header line, it names more
     *     than {@link #MAX_COLUMNS} columns or one twice
     */
    public static List<ToolRecord> csvWithHeader(String tool, String text) throws DeviceDriverException {
        checkSize(tool, text, "CSV");
        String[] lines = text.split("\r?\n|\r", -1);
        for (int n = 0; n < lines.length; n++) {
            if (lines[n].isBlank()) {
                continue;
            }
            List<String> columns = CsvLines.split(lines[n]);
            if (columns == null || columns.size() > MAX_COLUMNS || columns.size() != columns.stream().distinct().count()
                    || columns.contains("")) {
                throw new DeviceDriverException(tool + " printed a header line " + (n + 1) + " '" + SysfsErrors.abbreviate(lines[n])
                        + "'; expected 1 to " + MAX_COLUMNS + " distinct, non-empty column names separated by commas");
            }
            return rows(tool, lines, n + 1, columns);
        }
        throw new DeviceDriverException(tool + " printed no CSV header line; expected the column names, then one line per device");
    }

    /**
     * One line of comma-separated output as a record of {@code columns}, for a driver that reads the
     * lines itself (to skip a tool's warning lines, or rows of a device it could not read).
     *
     * @param where the line as messages name it and as the record's device ({@code line 3})
     * @throws DeviceDriverException when the line has another number of fields than {@code
     *     columns} or an open quote: {@code <tool> printed an unexpected <where>: '<line>'; expected
     *     <n> comma-separated fields (<columns>) but found <m>}
     */
    public static ToolRecord csvLine(String tool, String where, String line, List<String> columns) throws DeviceDriverException {
        checkSize(tool, line, "CSV");
        if (columns.isEmpty() || columns.size() > MAX_COLUMNS) {
            throw new IllegalArgumentException("1 to " + MAX_COLUMNS + " columns expected, got " + columns.size());
        }
        List<String> f = CsvLines.split(line);
        if (f == null || f.size() != columns.size()) {
            throw new DeviceDriverException(tool + " printed an unexpected " + where + ": '" + SysfsErrors.abbreviate(line.strip())
                    + "'; expected " + columns.size() + " comma-separated fields (" + String.join(", ", columns) + ")"
                    + (f == null ? " but a double quote is not closed" : " but found " + f.size()
                    + (f.size() < columns.size() ? " (truncated output?)" : "")));
        }
        Map<String, Object> fields = new LinkedHashMap<>();
        for (int i = 0; i < f.size(); i++) {
            fields.put(columns.get(i), f.get(i));
        }
        return ToolRecord.row(tool, where, fields);
    }

    private static List<ToolRecord> rows(String tool, String[] lines, int from, List<String> columns) throws DeviceDriverException {
        List<ToolRecord> out = new ArrayList<>();
        for (int n = from; n < lines.length; n++) {
            if (!lines[n].isBlank()) {
                out.add(csvLine(tool, "line " + (n + 1), lines[n], columns));
            }
        }
        return out;
    }

    private static void checkSize(String tool, String text, String format) throws DeviceDriverException {
        if (text.length() > MAX_CHARS) {
            throw new DeviceDriverException(tool + " printed " + text.length() + " characters of " + format
                    + "; expected at most " + MAX_CHARS + " (a short document per device)");
        }
    }
}
