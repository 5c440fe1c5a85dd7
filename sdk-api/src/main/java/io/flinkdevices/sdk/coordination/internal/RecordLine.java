package io.flinkdevices.sdk.coordination.internal;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Pattern;

/**
 * One record line of a coordination file: {@code <device id> <owner pid> <owner start token>
 * <boot id>/<pid namespace>}, its id encoding ({@code %XX} for whitespace, {@code %}, {@code #}
 * and control characters), and how a damaged line is still read for its id and PID.
 */
final class RecordLine {

    // compiled once: a file of 64 records is parsed in every transaction
    private static final Pattern FIELD_SEPARATOR = Pattern.compile("[ \t]+");
    private static final Pattern BOOT_ID = Pattern.compile("[0-9A-Za-z-]{1,64}");
    private static final Pattern NAMESPACE = Pattern.compile("[0-9]{1,20}");
    private static final Pattern PID = Pattern.compile("[0-9]{1,18}");

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

    /** Parses one line; the record it holds, or {@code null} when it was dropped. */
    static DeviceRecord parse(
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
