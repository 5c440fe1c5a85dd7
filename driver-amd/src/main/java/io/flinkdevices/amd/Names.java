package io.flinkdevices.amd;

/**
 * Names that a host hands the driver (sysfs {@code product_name}, amd-smi's {@code market_name})
 * and that reach infos, job code and log lines. They are sanitised, not refused: a damaged name
 * says nothing about whether the GPU works, so it should not cost the TaskManager its GPUs. Control
 * characters (which would forge log lines or terminal output) and bytes that are not UTF-8 (read as
 * U+FFFD) become {@code ?}, and a name is cut to {@value #MAX_NAME} characters.
 */
final class Names {

    /** The longest name kept; AMD's longest market names have about 40 characters. */
    static final int MAX_NAME = 128;

    private Names() {}

    /** {@code raw} stripped, control characters and undecodable bytes as {@code ?}, at most {@code max} characters. */
    static String printable(String raw, int max) {
        String s = raw.strip();
        boolean cut = s.length() > max;
        if (cut) {
            s = s.substring(0, max);
        }
        StringBuilder out = new StringBuilder(s.length() + 3);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean bad = Character.isISOControl(c) || c == '\uFFFD' || Character.isSurrogate(c)
                    || Character.getType(c) == Character.FORMAT;
            out.append(bad ? '?' : c);
        }
        return cut ? out.append("...").toString() : out.toString();
    }
}
