package io.flinkdevices.sdk.coordination.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

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
 * without a newline is read like any other: an editor may leave the newline out, and a line that
 * names a device and a PID keeps the device held while that PID runs (a PID cut short by a torn
 * write can only name a process that then seems to hold a device it does not, never free a
 * device a running owner holds). Lines in Flink's own {@code <index> <pid>} format are read as
 * such damaged records. Lines of {@code #}s (and spaces) are padding left by writers (see {@link
 * #rewrite}).
 */
public final class RecordFormat {

    // compiled once: a file of 64 records is parsed in every transaction
    private static final java.util.regex.Pattern FIELD_SEPARATOR = java.util.regex.Pattern.compile("[ \t]+");
    private static final java.util.regex.Pattern BOOT_ID = java.util.regex.Pattern.compile("[0-9A-Za-z-]{1,64}");
    private static final java.util.regex.Pattern NAMESPACE = java.util.regex.Pattern.compile("[0-9]{1,20}");
    private static final java.util.regex.Pattern PID = java.util.regex.Pattern.compile("[0-9]{1,18}");

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

    /** Renders records as the content of a coordination file. */
    public static byte[] format(List<DeviceRecord> records) {
        StringBuilder sb = new StringBuilder(HEADER.length() + records.size() * 80);
        sb.append(HEADER);
        for (DeviceRecord r : records) {
            appendRecord(sb, r);
        }
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Reads a coordination file's content, keeping whatever can be read. */
    public static Parsed parse(byte[] content) {
        return layout(content).parsed;
    }

    /**
     * Reads a coordination file's content with the place of every line, so that a writer can
     * change the file without moving the lines it keeps (see {@link #rewrite}).
     */
    public static Layout layout(byte[] content) {
        List<DeviceRecord> records = new ArrayList<>();
        List<String> dropped = new ArrayList<>();
        List<String> partial = new ArrayList<>();
        List<Line> lines = new ArrayList<>();
        int pos = 0;
        while (pos < content.length) {
            int nl = indexOf(content, (byte) '\n', pos);
            boolean terminated = nl >= 0;
            int end = terminated ? nl + 1 : content.length;
            int textEnd = terminated ? nl : content.length;
            if (textEnd > pos && content[textEnd - 1] == '\r') {
                textEnd--;
            }
            String line = new String(content, pos, textEnd - pos, StandardCharsets.UTF_8);
            Line l = new Line(pos, end - pos, terminated);
            if (line.isBlank() || isPadding(line)) {
                l.kind = Kind.FREE;
            } else if (line.startsWith("#")) {
                l.kind = Kind.COMMENT;
            } else {
                int before = partial.size();
                DeviceRecord r = parseLine(line, terminated, records, dropped, partial);
                if (r == null) {
                    l.kind = Kind.DROPPED;
                } else {
                    l.kind = partial.size() > before ? Kind.PARTIAL : Kind.RECORD;
                    l.record = r;
                }
            }
            lines.add(l);
            pos = end;
        }
        return new Layout(content, lines, new Parsed(records, dropped, partial));
    }

    /** A line that only pads: {@code #} then {@code #}s or spaces ({@link #blank} writes {@code #}s). */
    private static boolean isPadding(String line) {
        if (line.isEmpty() || line.charAt(0) != '#') {
            return false;
        }
        for (int i = 1; i < line.length(); i++) {
            if (line.charAt(i) != ' ' && line.charAt(i) != '#') {
                return false;
            }
        }
        return true;
    }

    private static int indexOf(byte[] a, byte b, int from) {
        for (int i = from; i < a.length; i++) {
            if (a[i] == b) {
                return i;
            }
        }
        return -1;
    }

    /** What a line of a file is. */
    enum Kind {
        /** A complete record. */
        RECORD,
        /** A record read from a damaged line. */
        PARTIAL,
        /** An unreadable line. */
        DROPPED,
        /** A comment someone wrote (our header, an operator's note): kept. */
        COMMENT,
        /** A blank line or our padding: space a writer may reuse. */
        FREE
    }

    /** One line of a file: where it is, and what it holds. */
    static final class Line {
        final int offset;
        final int length;
        final boolean terminated;
        Kind kind;
        DeviceRecord record;

        Line(int offset, int length, boolean terminated) {
            this.offset = offset;
            this.length = length;
            this.terminated = terminated;
        }
    }

    /** A file's bytes, its lines and what they hold. */
    public static final class Layout {
        final byte[] content;
        final List<Line> lines;
        final Parsed parsed;

        Layout(byte[] content, List<Line> lines, Parsed parsed) {
            this.content = content;
            this.lines = lines;
            this.parsed = parsed;
        }

        /** What the file holds. */
        public Parsed parsed() {
            return parsed;
        }

        /** The file's length in bytes. */
        public int length() {
            return content.length;
        }
    }

    /**
     * How to turn a file into one holding {@code records}: bytes to append at the old end
     * ({@link #tail}, written first), the new first {@code length} bytes ({@link #head}, written
     * second, {@code null} when unchanged) and the length to truncate to afterwards.
     *
     * <p>A record that stays is never moved or rewritten: its bytes are the same in the old and
     * the new content, so however a write is cut short (a process killed in the middle of it, a
     * full disk), every byte of a record that stays is either the old or the new one, which are
     * equal. Lines that go are overwritten in place with {@code #}s of their own length (padding,
     * ignored when read), so a cut inside one leaves a line that starts with {@code #} or the
     * whole old line. New records of the writer go only into one old line of {@code #}s, so a cut
     * inside a new record leaves its prefix followed by {@code #}s, which never reads as a
     * different complete record (a cut can only damage the writer's own new record, whose
     * process is dying), or are appended; a last line without its newline is believed for its id
     * and PID only. Records re-written from damaged lines are appended by the first write and the
     * damaged line is padded by the second, so that no cut loses both.
     */
    public static final class Rewrite {
        /** Bytes to write at the old end of the file; empty when nothing is appended. */
        public final byte[] tail;
        /** The new first bytes of the file, as long as the old file; {@code null} when unchanged. */
        public final byte[] head;
        /** The file's length after both writes. */
        public final long written;
        /** Where to truncate the file after both writes; equal to {@link #written} when not. */
        public final long truncateTo;

        Rewrite(byte[] tail, byte[] head, long written, long truncateTo) {
            this.tail = tail;
            this.head = head;
            this.written = written;
            this.truncateTo = truncateTo;
        }
    }

    /** Plans writing {@code records} over the file {@code old} (see {@link Rewrite}). */
    public static Rewrite rewrite(Layout old, List<DeviceRecord> records) {
        if (old.content.length == 0) {
            byte[] all = format(records);
            return new Rewrite(all, null, all.length, all.length);
        }
        Map<DeviceRecord, Integer> wanted = new HashMap<>();
        for (DeviceRecord r : records) {
            wanted.merge(r, 1, Integer::sum);
        }
        byte[] head = old.content.clone();
        boolean changed = false;
        List<Line> free = new ArrayList<>(); // lines that are padding after this write
        boolean[] isFree = new boolean[old.lines.size()];
        List<DeviceRecord> relocate = new ArrayList<>();
        for (int i = 0; i < old.lines.size(); i++) {
            Line l = old.lines.get(i);
            boolean keep = false;
            if (l.kind == Kind.RECORD || l.kind == Kind.PARTIAL) {
                Integer n = wanted.get(l.record);
                if (n != null && n > 0) {
                    wanted.put(l.record, n - 1);
                    if (l.kind == Kind.PARTIAL) {
                        // rewritten whole at the end first, padded here second
                        relocate.add(l.record);
                    } else {
                        keep = true;
                    }
                }
            } else if (l.kind == Kind.COMMENT) {
                keep = true;
            }
            if (!keep) {
                if (l.kind != Kind.FREE) {
                    blank(head, l.offset, l.length, l.terminated);
                    changed = true;
                }
                isFree[i] = true;
            }
        }
        List<DeviceRecord> added = new ArrayList<>();
        for (DeviceRecord r : records) {
            Integer n = wanted.get(r);
            if (n != null && n > 0) {
                wanted.put(r, n - 1);
                added.add(r);
            }
        }
        // New records go only into one old line of '#' padding, whose every byte but the last is
        // '#': a write cut anywhere inside the new record then leaves its prefix followed by '#'
        // (an unreadable field, so the line is dropped or kept as damaged, never a different
        // complete record) or, when only the newline is missing, the whole record. Runs of several
        // padding lines are merged into one line for later writes.
        int i = 0;
        int next = 0;
        while (i < old.lines.size()) {
            if (!isFree[i] || !old.lines.get(i).terminated) {
                i++;
                continue;
            }
            int j = i;
            while (j < old.lines.size() && isFree[j] && old.lines.get(j).terminated) {
                j++;
            }
            int start = old.lines.get(i).offset;
            Line last = old.lines.get(j - 1);
            int end = last.offset + last.length;
            if (j - i == 1 && isHashPadding(old.content, start, end)) {
                int at = start;
                while (next < added.size()) {
                    byte[] line = recordLine(added.get(next));
                    if (line.length > end - at) {
                        break;
                    }
                    System.arraycopy(line, 0, head, at, line.length);
                    at += line.length;
                    next++;
                    changed = true;
                }
                if (at > start) {
                    blank(head, at, end - at, true);
                }
            } else if (!isHashPadding(head, start, end)) {
                blank(head, start, end - start, true);
                changed = true;
            }
            i = j;
        }
        StringBuilder tail = new StringBuilder();
        boolean needNewline = head[head.length - 1] != '\n';
        for (DeviceRecord r : relocate) {
            appendRecord(tail, r);
        }
        for (int k = next; k < added.size(); k++) {
            appendRecord(tail, added.get(k));
        }
        byte[] tailBytes = new byte[0];
        if (tail.length() > 0) {
            tailBytes = ((needNewline ? "\n" : "") + tail).getBytes(StandardCharsets.UTF_8);
        }
        long written = head.length + (long) tailBytes.length;
        long truncateTo = tailBytes.length == 0 ? trailingPadding(head) : written;
        return new Rewrite(tailBytes, changed ? head : null, written, truncateTo);
    }

    /** Where the padding lines at the end of {@code b} begin ({@code b.length} when none). */
    private static int trailingPadding(byte[] b) {
        int p = b.length;
        while (p > 0) {
            int s = p - 1;
            if (b[s] == '\n') {
                s--;
            }
            while (s >= 0 && b[s] != '\n') {
                s--;
            }
            s++; // the line is [s, p)
            for (int k = s; k < p; k++) {
                byte c = b[k];
                boolean pad = c == ' ' || c == '\n' || c == '\r' || c == '#';
                if (!pad) {
                    return p;
                }
            }
            p = s;
        }
        return p;
    }

    /** Whether {@code b[start, end)} is one line of {@code #} padding: {@code #...#\n}. */
    private static boolean isHashPadding(byte[] b, int start, int end) {
        if (end - start < 2 || b[end - 1] != '\n') {
            return false;
        }
        for (int k = start; k < end - 1; k++) {
            if (b[k] != '#') {
                return false;
            }
        }
        return true;
    }

    /**
     * Pads {@code length} bytes at {@code offset}: {@code #}s and a newline (a lone newline for
     * one byte; no newline for an unterminated last line).
     */
    private static void blank(byte[] b, int offset, int length, boolean terminated) {
        if (length == 0) {
            return;
        }
        int end = offset + length;
        if (terminated) {
            b[end - 1] = '\n';
            end--;
        }
        if (end > offset) {
            java.util.Arrays.fill(b, offset, end, (byte) '#');
        }
    }

    private static byte[] recordLine(DeviceRecord r) {
        StringBuilder sb = new StringBuilder(80);
        appendRecord(sb, r);
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static void appendRecord(StringBuilder sb, DeviceRecord r) {
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

    /** Parses one line; the record it holds, or {@code null} when it was dropped. */
    private static DeviceRecord parseLine(
            String line,
            boolean terminated,
            List<DeviceRecord> records,
            List<String> dropped,
            List<String> partial) {
        String[] f = FIELD_SEPARATOR.split(line.trim());
        String id = f.length >= 1 ? decodeId(f[0]) : null;
        long pid = f.length >= 2 ? parsePid(f[1]) : -1;
        if (id == null || pid <= 0) {
            dropped.add(line);
            return null;
        }
        String start = ProcessIdentity.UNKNOWN;
        String boot = ProcessIdentity.UNKNOWN;
        String ns = ProcessIdentity.UNKNOWN;
        // A line without its newline may be cut short anywhere (even inside the namespace), so
        // only its id and PID are believed.
        boolean complete = terminated && f.length == 4;
        if (complete) {
            start = f[2];
            int slash = f[3].lastIndexOf('/');
            boot = slash > 0 ? f[3].substring(0, slash) : "";
            ns = slash > 0 ? f[3].substring(slash + 1) : "";
            complete =
                    ProcessIdentity.isValidStart(start)
                            && (boot.equals(ProcessIdentity.UNKNOWN)
                                    || BOOT_ID.matcher(boot).matches())
                            && (ns.equals(ProcessIdentity.UNKNOWN) || NAMESPACE.matcher(ns).matches());
        }
        if (!complete) {
            start = ProcessIdentity.UNKNOWN;
            boot = ProcessIdentity.UNKNOWN;
            ns = ProcessIdentity.UNKNOWN;
            partial.add(line);
        }
        DeviceRecord r = new DeviceRecord(id, pid, start, boot, ns);
        records.add(r);
        return r;
    }

    private static long parsePid(String s) {
        if (!PID.matcher(s).matches()) {
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
