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
 * without a newline is read like any other: an editor may leave the newline out, and a line that
 * names a device and a PID keeps the device held while that PID runs (a PID cut short by a torn
 * write can only name a process that then seems to hold a device it does not, never free a
 * device a running owner holds). Lines in Flink's own {@code <index> <pid>} format are read as
 * such damaged records. Lines of {@code #}s (and spaces) are padding left by writers (see {@link
 * #rewrite}).
 *
 * <p>A device out of service is one quarantine line, {@code #!quarantine <device id> <since ms>
 * <who> <reason>} (every field encoded like an id): it starts with {@code #}, so a release that
 * knows no quarantine reads it as a comment and keeps it. A file without quarantine lines is read
 * as before; a quarantine line cut short by a killed writer is dropped.
 *
 * <p>One line is read and written by {@link RecordLine}; a change is planned in place by {@link
 * RewritePlanner}.
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
        private final List<QuarantineRecord> quarantines;
        private final List<String> dropped;
        private final List<String> partial;

        Parsed(List<DeviceRecord> records, List<QuarantineRecord> quarantines, List<String> dropped, List<String> partial) {
            this.records = List.copyOf(records);
            this.quarantines = List.copyOf(quarantines);
            this.dropped = List.copyOf(dropped);
            this.partial = List.copyOf(partial);
        }

        public List<DeviceRecord> records() {
            return records;
        }

        /** The devices out of service, in file order. */
        public List<QuarantineRecord> quarantines() {
            return quarantines;
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
        return format(records, List.of());
    }

    /** Renders records and quarantines as the content of a coordination file. */
    public static byte[] format(List<DeviceRecord> records, List<QuarantineRecord> quarantines) {
        StringBuilder sb = new StringBuilder(HEADER.length() + records.size() * 80);
        sb.append(HEADER);
        for (DeviceRecord r : records) {
            RecordLine.append(sb, r);
        }
        for (QuarantineRecord q : quarantines) {
            RecordLine.append(sb, q);
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
        List<QuarantineRecord> quarantines = new ArrayList<>();
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
            } else if (RecordLine.isQuarantine(line)) {
                QuarantineRecord q = RecordLine.parseQuarantine(line, terminated);
                if (q == null) {
                    l.kind = Kind.DROPPED;
                    dropped.add(line);
                } else {
                    l.kind = Kind.QUARANTINE;
                    l.quarantine = q;
                    quarantines.add(q);
                }
            } else if (line.startsWith("#")) {
                l.kind = Kind.COMMENT;
            } else {
                int before = partial.size();
                DeviceRecord r = RecordLine.parse(line, terminated, records, dropped, partial);
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
        return new Layout(content, lines, new Parsed(records, quarantines, dropped, partial));
    }

    /** A line that only pads: {@code #} then {@code #}s or spaces (writers pad with {@code #}s). */
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
        /** A quarantine line. */
        QUARANTINE,
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
        QuarantineRecord quarantine;

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

        /** Whether {@code bytes} are this layout's content. */
        boolean sameContent(byte[] bytes) {
            return java.util.Arrays.equals(content, bytes);
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
        return RewritePlanner.plan(old, records, old.parsed.quarantines());
    }

    /** Plans writing {@code records} and {@code quarantines} over the file {@code old} (see {@link Rewrite}). */
    public static Rewrite rewrite(Layout old, List<DeviceRecord> records, List<QuarantineRecord> quarantines) {
        return RewritePlanner.plan(old, records, quarantines);
    }

    /** Writes an id so that it is one whitespace-free token. */
    public static String encodeId(String id) {
        return RecordLine.encodeId(id);
    }

    /** The id a token stands for; {@code null} when the token is not a valid encoding. */
    public static String decodeId(String token) {
        return RecordLine.decodeId(token);
    }
}
