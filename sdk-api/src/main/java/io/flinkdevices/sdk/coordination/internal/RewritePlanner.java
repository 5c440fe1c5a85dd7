package io.flinkdevices.sdk.coordination.internal;

import io.flinkdevices.sdk.coordination.internal.RecordFormat.Kind;
import io.flinkdevices.sdk.coordination.internal.RecordFormat.Layout;
import io.flinkdevices.sdk.coordination.internal.RecordFormat.Line;
import io.flinkdevices.sdk.coordination.internal.RecordFormat.Rewrite;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Plans a change of a coordination file in place, so that a writer killed at any point of any
 * write never damages another owner's record: records that stay keep their bytes, lines that go
 * become {@code #} padding of their own length, new records go into one old line of padding or
 * at the end (see {@link Rewrite} for why each cut is safe).
 */
final class RewritePlanner {

    private RewritePlanner() {}

    /** Plans writing {@code records} over the file {@code old} (see {@link Rewrite}). */
    static Rewrite plan(Layout old, List<DeviceRecord> records, List<QuarantineRecord> quarantines) {
        if (old.content.length == 0) {
            byte[] all = RecordFormat.format(records, quarantines);
            return new Rewrite(all, null, all.length, all.length);
        }
        // records and quarantines alike: a line that stays keeps its bytes, new ones go into padding
        List<Object> entries = new ArrayList<>(records.size() + quarantines.size());
        entries.addAll(records);
        entries.addAll(quarantines);
        Map<Object, Integer> wanted = new HashMap<>();
        for (Object r : entries) {
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
            } else if (l.kind == Kind.QUARANTINE) {
                Integer n = wanted.get(l.quarantine);
                if (n != null && n > 0) {
                    wanted.put(l.quarantine, n - 1);
                    keep = true;
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
        List<Object> added = new ArrayList<>();
        for (Object r : entries) {
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
                    byte[] line = bytes(added.get(next));
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
            RecordLine.append(tail, r);
        }
        for (int k = next; k < added.size(); k++) {
            tail.append(new String(bytes(added.get(k)), StandardCharsets.UTF_8));
        }
        byte[] tailBytes = new byte[0];
        if (tail.length() > 0) {
            tailBytes = ((needNewline ? "\n" : "") + tail).getBytes(StandardCharsets.UTF_8);
        }
        long written = head.length + (long) tailBytes.length;
        long truncateTo = tailBytes.length == 0 ? trailingPadding(head) : written;
        return new Rewrite(tailBytes, changed ? head : null, written, truncateTo);
    }

    private static byte[] bytes(Object entry) {
        return entry instanceof QuarantineRecord
                ? RecordLine.bytes((QuarantineRecord) entry)
                : RecordLine.bytes((DeviceRecord) entry);
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
            Arrays.fill(b, offset, end, (byte) '#');
        }
    }
}
