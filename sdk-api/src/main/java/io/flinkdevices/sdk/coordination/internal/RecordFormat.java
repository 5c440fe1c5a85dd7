package io.flinkdevices.sdk.coordination.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The text format of a coordination file, and its repair.
 *
 * <pre>
 * # comment
 * &lt;device id&gt; &lt;owner pid&gt; &lt;owner start token&gt; &lt;boot id&gt;/&lt;pid namespace&gt;
 * </pre>
 *
 * <p>Device ids are opaque and matched exactly; whitespace, {@code %}, {@code #} and control
 * characters in an id are written as {@code %XX}. Reading never fails: a line that names a device
 * and an owner PID is kept, even when the rest is damaged (the owner then counts as alive while
 * its PID runs, see {@link DeviceRecord}); other lines are dropped and reported. A last line
 * without a newline is a torn write: it is kept only if at least the id, the PID and one more
 * field were written, since a torn PID could name another process. Lines in Flink's own {@code
 * <index> <pid>} format are read as such damaged records.
 */
public final class RecordFormat {

    /** The first lines of every file we write. */
    public static final String HEADER =
            "# flink-devices device coordination file: one device per line, written under a lock on"
                    + " the sibling .lock file.\n"
                    + "# <device id> <owner pid> <owner start> <boot id>/<pid namespace>\n";

    private RecordFormat() {}

    /** What was read from a file: the records, and what was dropped or only partly read. */
    public static final class Parsed {
        private final List<DeviceRecord> records;
        private final List<String> dropped;
        private final List<String> partial;

        Parsed(List<DeviceRecord> records, List<String> dropped, List<String> partial) {
            this.records = List.copyOf(records);
            this.dropped = List.copyOf(dropped);
            this.partial = List.copyOf(partial);
        }

        public List<DeviceRecord> records() {
            return records;
        }

        /** Lines that could not be read at all. */
        public List<String> dropped() {
            return dropped;
        }

        /** Lines kept as records although some fields were missing or damaged. */
        public List<String> partial() {
            return partial;
        }

        /** Whether the file needs to be rewritten to be clean. */
        public boolean damaged() {
            return !dropped.isEmpty() || !partial.isEmpty();
        }
    }

    /**
     * {@code content} followed by blank padding up to {@code oldLength} bytes when it is shorter:
     * written in place over a longer file in one write, it leaves no fragment of an old line even
     * if the writer dies before it truncates the file. The padding is a comment line ({@code #}
     * then spaces), or a lone newline when one byte is missing; both are ignored when read.
     */
    public static byte[] padded(byte[] content, long oldLength) {
        if (oldLength <= content.length) {
            return content;
        }
        if (oldLength > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("coordination file of " + oldLength + " bytes");
        }
        byte[] out = java.util.Arrays.copyOf(content, (int) oldLength);
        int gap = out.length - content.length;
        if (gap == 1) {
            out[content.length] = '\n';
            return out;
        }
        out[content.length] = '#';
        java.util.Arrays.fill(out, content.length + 1, out.length - 1, (byte) ' ');
        out[out.length - 1] = '\n';
        return out;
    }

    /** Renders records as the content of a coordination file. */
    public static byte[] format(List<DeviceRecord> records) {
        StringBuilder sb = new StringBuilder(HEADER.length() + records.size() * 80);
        sb.append(HEADER);
        for (DeviceRecord r : records) {
            sb.append(encodeId(r.deviceId()))
                    .append(' ')
                    .append(r.pid())
                    .append(' ')
                    .append(r.start())
                    .append(' ')
                    .append(r.bootId())
                    .append('/')
                    .append(r.pidNamespace())
                    .append('\n');
        }
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Reads a coordination file's content, keeping whatever can be read. */
    public static Parsed parse(byte[] content) {
        String text = new String(content, StandardCharsets.UTF_8);
        List<DeviceRecord> records = new ArrayList<>();
        List<String> dropped = new ArrayList<>();
        List<String> partial = new ArrayList<>();
        int pos = 0;
        while (pos < text.length()) {
            int nl = text.indexOf('\n', pos);
            boolean terminated = nl >= 0;
            String line = terminated ? text.substring(pos, nl) : text.substring(pos);
            pos = terminated ? nl + 1 : text.length();
            if (line.endsWith("\r")) {
                line = line.substring(0, line.length() - 1);
            }
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            parseLine(line, terminated, records, dropped, partial);
        }
        return new Parsed(records, dropped, partial);
    }

    private static void parseLine(
            String line,
            boolean terminated,
            List<DeviceRecord> records,
            List<String> dropped,
            List<String> partial) {
        String[] f = line.trim().split("[ \t]+");
        String id = f.length >= 1 ? decodeId(f[0]) : null;
        long pid = f.length >= 2 ? parsePid(f[1]) : -1;
        if (id == null || pid <= 0 || (!terminated && f.length < 3)) {
            dropped.add(line);
            return;
        }
        String start = ProcessIdentity.UNKNOWN;
        String boot = ProcessIdentity.UNKNOWN;
        String ns = ProcessIdentity.UNKNOWN;
        boolean complete = terminated && f.length == 4;
        if (complete) {
            start = f[2];
            int slash = f[3].lastIndexOf('/');
            boot = slash > 0 ? f[3].substring(0, slash) : "";
            ns = slash > 0 ? f[3].substring(slash + 1) : "";
            complete =
                    ProcessIdentity.isValidStart(start)
                            && (boot.equals(ProcessIdentity.UNKNOWN)
                                    || boot.matches("[0-9A-Za-z-]{1,64}"))
                            && (ns.equals(ProcessIdentity.UNKNOWN) || ns.matches("[0-9]{1,20}"));
        }
        if (!complete) {
            start = ProcessIdentity.UNKNOWN;
            boot = ProcessIdentity.UNKNOWN;
            ns = ProcessIdentity.UNKNOWN;
            partial.add(line);
        }
        records.add(new DeviceRecord(id, pid, start, boot, ns));
    }

    private static long parsePid(String s) {
        if (!s.matches("[0-9]{1,18}")) {
            return -1;
        }
        return Long.parseLong(s);
    }

    /** Writes an id so that it is one whitespace-free token. */
    public static String encodeId(String id) {
        StringBuilder sb = null;
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (c <= ' ' || c == '%' || c == '#' || c == 0x7f) {
                if (sb == null) {
                    sb = new StringBuilder(id.length() + 8).append(id, 0, i);
                }
                sb.append('%').append(Character.forDigit(c >> 4, 16)).append(Character.forDigit(c & 0xf, 16));
            } else if (sb != null) {
                sb.append(c);
            }
        }
        return sb == null ? id : sb.toString();
    }

    /** The id a token stands for; {@code null} when the token is not a valid encoding. */
    public static String decodeId(String token) {
        if (token.isEmpty()) {
            return null;
        }
        if (token.indexOf('%') < 0) {
            return token.indexOf('#') < 0 ? token : null;
        }
        StringBuilder sb = new StringBuilder(token.length());
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            if (c == '%') {
                if (i + 2 >= token.length()) {
                    return null;
                }
                int hi = Character.digit(token.charAt(i + 1), 16);
                int lo = Character.digit(token.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    return null;
                }
                sb.append((char) (hi << 4 | lo));
                i += 2;
            } else if (c == '#') {
                return null;
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }
}
