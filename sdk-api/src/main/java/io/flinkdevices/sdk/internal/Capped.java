package io.flinkdevices.sdk.internal;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Text from outside (a vendor library's error string, a recorded reason) cut to a length a log line
 * or an exception message can carry: a 1 MiB string copied whole into every message of a
 * TaskManager would swamp its log and its memory.
 */
public final class Capped {

    /** How many characters of such a text messages keep. */
    public static final int MESSAGE_CHARS = 200;

    private static final Pattern CAPPED = Pattern.compile("… \\(\\d+ more characters\\)$");

    private Capped() {}

    /**
     * {@code text} when it has at most {@code max} characters, else its first {@code max} (never
     * half a surrogate pair) and {@code … (N more characters)}.
     */
    public static String text(String text, int max) {
        if (text == null || text.length() <= max) {
            return text;
        }
        Matcher m = CAPPED.matcher(text);
        if (m.find() && m.start() <= max) {
            return text; // capped before (when it was recorded): cutting again would lose the count
        }
        int end = Character.isHighSurrogate(text.charAt(max - 1)) ? max - 1 : max;
        return text.substring(0, end) + "… (" + (text.length() - end) + " more characters)";
    }

    /** {@link #text(String, int)} at {@link #MESSAGE_CHARS}. */
    public static String text(String text) {
        return text(text, MESSAGE_CHARS);
    }
}
