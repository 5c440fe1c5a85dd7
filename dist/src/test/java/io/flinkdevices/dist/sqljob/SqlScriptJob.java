package io.flinkdevices.dist.sqljob;

import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A job jar's main that runs an SQL script as the SQL client's {@code -f} does: statements end
 * with a {@code ;} at the end of a line, {@code --} lines are comments, {@code SET 'key' = 'value'}
 * sets a table option, and the rows of every
 * query are printed, one {@code ROW} line each, fields separated by {@code |} and array elements
 * by {@code ,}.
 */
public final class SqlScriptJob {

    private static final Pattern SET = Pattern.compile("(?is)SET\\s+'([^']+)'\\s*=\\s*'([^']*)'");

    private SqlScriptJob() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            throw new IllegalArgumentException("usage: SqlScriptJob <script.sql>");
        }
        TableEnvironment tEnv = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        for (String statement : statements(Files.readString(Path.of(args[0]), StandardCharsets.UTF_8))) {
            Matcher set = SET.matcher(statement);
            if (set.matches()) {
                // the SQL client's SET, which executeSql does not take
                tEnv.getConfig().set(set.group(1), set.group(2));
                continue;
            }
            TableResult result = tEnv.executeSql(statement);
            if (statement.regionMatches(true, 0, "SELECT", 0, 6)) {
                try (CloseableIterator<Row> rows = result.collect()) {
                    while (rows.hasNext()) {
                        System.out.println("ROW " + render(rows.next()));
                    }
                }
            }
        }
    }

    static List<String> statements(String script) {
        List<String> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : script.split("\n")) {
            if (line.strip().startsWith("--")) {
                continue;
            }
            current.append(line).append('\n');
            if (line.strip().endsWith(";")) {
                String s = current.toString().strip();
                out.add(s.substring(0, s.length() - 1));
                current.setLength(0);
            }
        }
        return out;
    }

    private static String render(Row row) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < row.getArity(); i++) {
            if (i > 0) {
                sb.append('|');
            }
            Object v = row.getField(i);
            if (v instanceof Object[]) {
                Object[] a = (Object[]) v;
                for (int j = 0; j < a.length; j++) {
                    sb.append(j > 0 ? "," : "").append(a[j]);
                }
            } else {
                sb.append(v);
            }
        }
        return sb.toString();
    }
}
