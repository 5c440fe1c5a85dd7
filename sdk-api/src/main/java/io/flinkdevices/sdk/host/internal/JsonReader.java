package io.flinkdevices.sdk.host.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small strict JSON reader (RFC 8259) for the output of vendor tools: objects become {@link
 * LinkedHashMap}s in the tool's order, lists {@link ArrayList}s, strings {@link String}s, numbers
 * {@link Num} (their text as printed), {@code true}/{@code false} {@link Boolean}s and {@code null}
 * {@link #NULL}. A plugin jar would otherwise bundle and relocate Jackson (some 2 MB and 400
 * classes loaded) to read a few hundred bytes a tool prints. Nesting is bounded ({@code
 * maxDepth}): the reader recurses, and a hostile tool must not overflow the TaskManager's stack;
 * the text's length is bounded by the caller.
 */
public final class JsonReader {

    /** JSON's {@code null}: a map cannot tell a {@code null} value from a missing key. */
    public static final Object NULL = new Object() {
        @Override
        public String toString() {
            return "null";
        }
    };

    /** A JSON number, kept as printed: a tool's {@code 0x1F} or {@code 1e999} is for the field check to judge. */
    public static final class Num {
        private final String text;

        Num(String text) {
            this.text = text;
        }

        /** The number as the tool printed it. */
        public String text() {
            return text;
        }

        @Override
        public String toString() {
            return text;
        }
    }

    /** Why a text is not one JSON document, and where. */
    public static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;

        /** What went wrong, which decides what a message says was expected. */
        public enum Kind {
            /** Not JSON, or JSON that ends early (truncated output). */
            SYNTAX,
            /** Nested deeper than the bound. */
            DEPTH,
            /** A whole document, then more text. */
            TRAILING
        }

        private final Kind kind;
        private final int line;
        private final int column;
        private final String rest;

        Failure(Kind kind, String message, int line, int column, String rest) {
            super(message);
            this.kind = kind;
            this.line = line;
            this.column = column;
            this.rest = rest;
        }

        /** What went wrong. */
        public Kind kind() {
            return kind;
        }

        /** The line (from 1) where it went wrong. */
        public int line() {
            return line;
        }

        /** The column (from 1) where it went wrong. */
        public int column() {
            return column;
        }

        /** For {@link Kind#TRAILING}: the text after the document. */
        public String rest() {
            return rest;
        }
    }

    private final String s;
    private final int maxDepth;
    private int pos;

    private JsonReader(String s, int maxDepth) {
        this.s = s;
        this.maxDepth = maxDepth;
    }

    /**
     * The one JSON document {@code text} holds.
     *
     * @throws Failure when it holds none, a broken one, one nested deeper than {@code maxDepth},
     *     or text after it
     */
    public static Object read(String text, int maxDepth) throws Failure {
        JsonReader r = new JsonReader(text, maxDepth);
        r.skipSpace();
        Object v = r.value(1);
        r.skipSpace();
        if (r.pos < text.length()) {
            throw r.failure(Failure.Kind.TRAILING, "more text after the document", text.substring(r.pos).strip());
        }
        return v;
    }

    private Object value(int depth) throws Failure {
        if (pos >= s.length()) {
            throw failure(Failure.Kind.SYNTAX, "the text ends where a value was expected", null);
        }
        char c = s.charAt(pos);
        switch (c) {
            case '{':
                return object(depth);
            case '[':
                return list(depth);
            case '"':
                return string();
            case 't':
                return word("true", Boolean.TRUE);
            case 'f':
                return word("false", Boolean.FALSE);
            case 'n':
                return word("null", NULL);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw failure(Failure.Kind.SYNTAX, "unexpected " + shown(c), null);
        }
    }

    private Map<String, Object> object(int depth) throws Failure {
        enter(depth);
        pos++;
        Map<String, Object> m = new LinkedHashMap<>();
        skipSpace();
        if (peek() == '}') {
            pos++;
            return m;
        }
        while (true) {
            skipSpace();
            if (peek() != '"') {
                throw failure(Failure.Kind.SYNTAX, "expected a field name in double quotes, found " + found(), null);
            }
            int at = pos;
            String key = string();
            skipSpace();
            expect(':');
            skipSpace();
            Object v = value(depth + 1);
            if (m.containsKey(key)) {
                pos = at;
                // two values for one field: which one the tool meant is anybody's guess
                throw failure(Failure.Kind.SYNTAX, "the field \"" + abbreviate(key) + "\" appears twice in one object", null);
            }
            m.put(key, v);
            skipSpace();
            char c = peek();
            pos++;
            if (c == '}') {
                return m;
            }
            if (c != ',') {
                pos--;
                throw failure(Failure.Kind.SYNTAX, "expected ',' or '}', found " + found(), null);
            }
        }
    }

    private List<Object> list(int depth) throws Failure {
        enter(depth);
        pos++;
        List<Object> l = new ArrayList<>();
        skipSpace();
        if (peek() == ']') {
            pos++;
            return l;
        }
        while (true) {
            skipSpace();
            l.add(value(depth + 1));
            skipSpace();
            char c = peek();
            pos++;
            if (c == ']') {
                return l;
            }
            if (c != ',') {
                pos--;
                throw failure(Failure.Kind.SYNTAX, "expected ',' or ']', found " + found(), null);
            }
        }
    }

    private void enter(int depth) throws Failure {
        if (depth > maxDepth) {
            throw failure(Failure.Kind.DEPTH, "nesting depth above " + maxDepth, null);
        }
    }

    private String string() throws Failure {
        pos++;
        StringBuilder b = new StringBuilder();
        while (pos < s.length()) {
            char c = s.charAt(pos++);
            if (c == '"') {
                return b.toString();
            }
            if (c == '\\') {
                b.append(escape());
            } else if (c < 0x20) {
                pos--;
                throw failure(Failure.Kind.SYNTAX, "a control character " + shown(c) + " inside a string", null);
            } else {
                b.append(c);
            }
        }
        throw failure(Failure.Kind.SYNTAX, "the text ends inside a string", null);
    }

    private char escape() throws Failure {
        if (pos >= s.length()) {
            throw failure(Failure.Kind.SYNTAX, "the text ends inside a string", null);
        }
        char c = s.charAt(pos++);
        switch (c) {
            case '"':
            case '\\':
            case '/':
                return c;
            case 'b':
                return '\b';
            case 'f':
                return '\f';
            case 'n':
                return '\n';
            case 'r':
                return '\r';
            case 't':
                return '\t';
            case 'u':
                if (pos + 4 <= s.length()) {
                    try {
                        char u = (char) Integer.parseInt(s.substring(pos, pos + 4), 16);
                        pos += 4;
                        return u;
                    } catch (NumberFormatException e) {
                        // reported below
                    }
                }
                throw failure(Failure.Kind.SYNTAX, "\\u not followed by four hexadecimal digits", null);
            default:
                pos--;
                throw failure(Failure.Kind.SYNTAX, "an unknown escape \\" + c, null);
        }
    }

    private Num number() throws Failure {
        int start = pos;
        if (peek() == '-') {
            pos++;
        }
        int digits = digits();
        if (digits == 0 || (digits > 1 && s.charAt(pos - digits) == '0')) {
            throw failure(Failure.Kind.SYNTAX, "a malformed number '" + abbreviate(s.substring(start, pos)) + "'", null);
        }
        if (peek() == '.') {
            pos++;
            if (digits() == 0) {
                throw failure(Failure.Kind.SYNTAX, "a number with no digit after its '.'", null);
            }
        }
        if (peek() == 'e' || peek() == 'E') {
            pos++;
            if (peek() == '+' || peek() == '-') {
                pos++;
            }
            if (digits() == 0) {
                throw failure(Failure.Kind.SYNTAX, "a number with no digit in its exponent", null);
            }
        }
        return new Num(s.substring(start, pos));
    }

    private int digits() {
        int n = 0;
        while (pos < s.length() && s.charAt(pos) >= '0' && s.charAt(pos) <= '9') {
            pos++;
            n++;
        }
        return n;
    }

    private Object word(String w, Object v) throws Failure {
        if (!s.startsWith(w, pos)) {
            throw failure(Failure.Kind.SYNTAX, "unexpected '" + abbreviate(s.substring(pos, Math.min(s.length(), pos + w.length()))) + "'", null);
        }
        pos += w.length();
        return v;
    }

    private void expect(char c) throws Failure {
        if (peek() != c) {
            throw failure(Failure.Kind.SYNTAX, "expected '" + c + "', found " + found(), null);
        }
        pos++;
    }

    /** The next character, or {@code 0} at the end (never valid where it is looked at). */
    private char peek() {
        return pos < s.length() ? s.charAt(pos) : 0;
    }

    private String found() {
        return pos < s.length() ? shown(s.charAt(pos)) : "the end of the text";
    }

    private void skipSpace() {
        while (pos < s.length()) {
            char c = s.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private Failure failure(Failure.Kind kind, String what, String rest) {
        int line = 1;
        int lineStart = 0;
        int end = Math.min(pos, s.length());
        for (int i = 0; i < end; i++) {
            if (s.charAt(i) == '\n') {
                line++;
                lineStart = i + 1;
            }
        }
        return new Failure(kind, what, line, end - lineStart + 1, rest);
    }

    private static String shown(char c) {
        return c < 0x20 || c == 0x7f ? String.format("U+%04X", (int) c) : "'" + c + "'";
    }

    private static String abbreviate(String v) {
        return SysfsErrors.abbreviate(v);
    }
}
