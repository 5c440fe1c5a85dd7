package io.flinkdevices.sdk.coordination.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One record line of a coordination file: {@code <device id> <owner pid> <owner start token>
 * <boot id>/<pid namespace>}, its id encoding ({@code %XX} for whitespace, {@code %}, {@code #}
 * and control characters), and how a damaged line is still read for its id and PID.
 */
final class RecordLine {

    // No regular expressions: every record of the file is parsed in every transaction, and
    // matching four patterns per line was the largest cost of a transaction.

    private RecordLine() {}

    /** One record as the bytes of its line. */
    static byte[] bytes(DeviceRecord r) {
        StringBuilder sb = new StringBuilder(80);
        append(sb, r);
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Appends one record as a line. */
    static void append(StringBuilder sb, DeviceRecord r) {
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

    /**
     * The start of a quarantine line. It starts with {@code #}, so that a release without
     * quarantine reads it as a comment and keeps it in place.
     */
    static final String QUARANTINE = "#!quarantine";

    /** One quarantine as the bytes of its line. */
    static byte[] bytes(QuarantineRecord q) {
        StringBuilder sb = new StringBuilder(120);
        append(sb, q);
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Appends one quarantine as a line: {@code #!quarantine <id> <since ms> <who> <reason>}, every
     * field encoded like an id, so that a {@code #} in a field marks a line cut short by a writer
     * that was killed.
     */
    static void append(StringBuilder sb, QuarantineRecord q) {
        sb.append(QUARANTINE)
                .append(' ')
                .append(encodeId(q.deviceId()))
                .append(' ')
                .append(q.sinceMillis())
                .append(' ')
                .append(encodeId(q.who()))
                .append(' ')
                .append(encodeId(q.reason()))
                .append('\n');
    }

    /**
     * Whether {@code line} is meant as a quarantine line (complete or not): {@code #!quarantine}
     * alone or followed by a space or a tab, the separators every field of the file takes. A tab
     * taken for a comment would hand the device out with no word in the log.
     */
    static boolean isQuarantine(String line) {
        if (!line.startsWith(QUARANTINE)) {
            return false;
        }
        int n = QUARANTINE.length();
        return line.length() == n || line.charAt(n) == ' ' || line.charAt(n) == '\t';
    }

    /**
     * Parses a quarantine line; {@code null} when it is damaged (cut short: no newline, a field
     * missing or holding a {@code #}), which drops it: a cut line is only ever the new line of a
     * writer that was killed while writing it.
     */
    static QuarantineRecord parseQuarantine(String line, boolean terminated) {
        if (!terminated) {
            return null;
        }
        List<String> f = fields(line.trim());
        if (f.size() != 5 || !f.get(0).equals(QUARANTINE) || !isDigits(f.get(2), 1, 18)) {
            return null;
        }
        String id = decodeId(f.get(1));
        String who = decodeId(f.get(3));
        String reason = decodeId(f.get(4));
        if (id == null || who == null || reason == null) {
            return null;
        }
        return new QuarantineRecord(id, Long.parseLong(f.get(2)), who, reason);
    }

    /** Parses one line; the record it holds, or {@code null} when it was dropped. */
    static DeviceRecord parse(
            String line,
            boolean terminated,
            List<DeviceRecord> records,
            List<String> dropped,
            List<String> partial) {
        List<String> f = fields(line.trim());
        String id = f.size() >= 1 ? decodeId(f.get(0)) : null;
        long pid = f.size() >= 2 ? parsePid(f.get(1)) : -1;
        if (id == null || pid <= 0) {
            dropped.add(line);
            return null;
        }
        String start = ProcessIdentity.UNKNOWN;
        String boot = ProcessIdentity.UNKNOWN;
        String ns = ProcessIdentity.UNKNOWN;
        // A line without its newline may be cut short anywhere (even inside the namespace), so
        // only its id and PID are believed.
        boolean complete = terminated && f.size() == 4;
        if (complete) {
            start = f.get(2);
            String place = f.get(3);
            int slash = place.lastIndexOf('/');
            boot = slash > 0 ? place.substring(0, slash) : "";
            ns = slash > 0 ? place.substring(slash + 1) : "";
            complete =
                    ProcessIdentity.isValidStart(start)
                            && (boot.equals(ProcessIdentity.UNKNOWN) || isBootId(boot))
                            && (ns.equals(ProcessIdentity.UNKNOWN) || isDigits(ns, 1, 20));
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
        if (!isDigits(s, 1, 18)) {
            return -1;
        }
        return Long.parseLong(s);
    }

    /** The fields of a trimmed line, split at runs of blanks and tabs (not at other controls). */
    private static List<String> fields(String line) {
        List<String> out = new ArrayList<>(4);
        int n = line.length();
        int i = 0;
        while (i < n) {
            int start = i;
            while (i < n && line.charAt(i) != ' ' && line.charAt(i) != '\t') {
                i++;
            }
            out.add(line.substring(start, i));
            while (i < n && (line.charAt(i) == ' ' || line.charAt(i) == '\t')) {
                i++;
            }
        }
        return out;
    }

    /** Whether {@code s} is {@code min} to {@code max} ASCII digits. */
    static boolean isDigits(String s, int min, int max) {
        int n = s.length();
        if (n < min || n > max) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    /** {@code [0-9A-Za-z-]{1,64}}: a boot id as the kernel writes it (a UUID). */
    private static boolean isBootId(String s) {
        int n = s.length();
        if (n < 1 || n > 64) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            boolean ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** Writes an id so that it is one whitespace-free token. */
    static String encodeId(String id) {
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
    static String decodeId(String token) {
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
