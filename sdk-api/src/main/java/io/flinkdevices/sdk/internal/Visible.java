package io.flinkdevices.sdk.internal;

import java.util.Locale;

/**
 * A configured value quoted for a message so that what cannot be seen is said: {@code '10 s'}
 * with a no-break space prints exactly like the valid {@code '10 s'}, and the operator is left
 * looking at a value that seems right. The first character outside printable ASCII is named.
 */
public final class Visible {

    private Visible() {}

    /**
     * {@code 'value'} (at most 200 characters, see {@link Capped}), followed by {@code (character 3
     * is U+00A0 NO-BREAK SPACE, which looks like a plain space but is not one)} when the value
     * holds a character outside printable ASCII.
     */
    public static String quoted(String value) {
        String q = "'" + Capped.text(value) + "'";
        for (int i = 0; i < value.length(); ) {
            int c = value.codePointAt(i);
            if (c < 0x20 || c > 0x7e) {
                String name = Character.getName(c);
                String what = String.format(Locale.ROOT, "U+%04X%s", c, name == null ? "" : " " + name);
                String looks = Character.isWhitespace(c) || Character.isSpaceChar(c)
                        ? "which looks like a plain space but is not one"
                        : Character.getType(c) == Character.FORMAT || Character.isISOControl(c)
                                ? "which does not show" : "not plain ASCII";
                return q + " (character " + (value.codePointCount(0, i) + 1) + " is "
                        + what + ", " + looks + ")";
            }
            i += Character.charCount(c);
        }
        return q;
    }
}
