package io.flinkdevices.cli.common;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.core.util.Separators.Spacing;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;

/**
 * The one JSON style of every command's {@code --json}: two-space indents, {@code "key": value},
 * one array element per line, {@code []} and {@code {}} for empty ones.
 */
public final class JsonStyle {

    /** Writes a value in that style; leaves the target open. */
    public static final ObjectWriter WRITER =
            new ObjectMapper()
                    .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET)
                    .writer(
                            new DefaultPrettyPrinter(
                                            Separators.createDefaultInstance()
                                                    .withObjectFieldValueSpacing(Spacing.AFTER)
                                                    .withArrayEmptySeparator("")
                                                    .withObjectEmptySeparator(""))
                                    .withArrayIndenter(DefaultIndenter.SYSTEM_LINEFEED_INSTANCE));

    private JsonStyle() {}
}
