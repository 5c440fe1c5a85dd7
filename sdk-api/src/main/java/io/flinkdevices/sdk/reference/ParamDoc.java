package io.flinkdevices.sdk.reference;

import io.flinkdevices.sdk.config.internal.DurationText;

import org.apache.flink.annotation.PublicEvolving;

import java.time.Duration;
import java.util.Objects;

/**
 * One parameter of a driver as its reference page shows it: the key under {@code
 * external-resource.<name>.param.}, its default and what it means.
 *
 * <p>A factory lists every key it reads in {@link DocumentedDriver#parameters()}; the project's
 * parameter reference is generated from those lists (as Flink generates its configuration tables
 * from {@code ConfigOption}s), and a test fails when a factory reads a key the list lacks.
 *
 * <pre>{@code
 * ParamDoc.of("timeout", ParamDoc.duration(DEFAULT_TIMEOUT), "how long one tool run may take; 1 ms to 1 d")
 * }</pre>
 */
@PublicEvolving
public final class ParamDoc {

    private final String key;
    private final String defaultValue;
    private final String meaning;

    private ParamDoc(String key, String defaultValue, String meaning) {
        this.key = TableCell.of(key, "key");
        this.defaultValue = TableCell.of(defaultValue, "defaultValue");
        this.meaning = TableCell.of(meaning, "meaning");
    }

    /**
     * A documented parameter.
     *
     * @param key the key without the {@code external-resource.<name>.param.} prefix
     * @param defaultValue the value when unset, as an operator reads it ({@code 10 s}, {@code
     *     none}, {@code every platform})
     * @param meaning what the parameter does and which values it takes, one or two sentences
     */
    public static ParamDoc of(String key, String defaultValue, String meaning) {
        return new ParamDoc(key, defaultValue, meaning);
    }

    /**
     * A duration as an operator writes it in {@code config.yaml}, set as code for a reference page:
     * {@code `10 s`}, {@code `5 min`}.
     */
    public static String duration(Duration d) {
        return "`" + DurationText.describe(d) + "`";
    }

    /** The key, without the {@code external-resource.<name>.param.} prefix. */
    public String key() {
        return key;
    }

    /** The default, as an operator reads it. */
    public String defaultValue() {
        return defaultValue;
    }

    /** What the parameter does and which values it takes. */
    public String meaning() {
        return meaning;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ParamDoc
                && key.equals(((ParamDoc) o).key)
                && defaultValue.equals(((ParamDoc) o).defaultValue)
                && meaning.equals(((ParamDoc) o).meaning);
    }

    @Override
    public int hashCode() {
        return Objects.hash(key, defaultValue, meaning);
    }

    @Override
    public String toString() {
        return key + " (default " + defaultValue + "): " + meaning;
    }
}
