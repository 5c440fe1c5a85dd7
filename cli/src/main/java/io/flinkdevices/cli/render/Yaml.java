package io.flinkdevices.cli.render;

import com.fasterxml.jackson.core.io.JsonStringEncoder;

/** Writes YAML scalars that every YAML reader takes as the same string. */
final class Yaml {

    private Yaml() {}

    /**
     * {@code value} as a double-quoted scalar: JSON's escapes are a subset of YAML's, so the text
     * reads back unchanged, whatever characters it holds.
     */
    static String quote(String value) {
        return "\"" + new String(JsonStringEncoder.getInstance().quoteAsString(value)) + "\"";
    }
}
