package io.flinkdevices.sdk.reference;

import java.util.Objects;

/** Checks text that becomes one cell of a generated reference table. */
final class TableCell {

    private TableCell() {}

    /** {@code value}, stripped; refused when null, blank or more than one line. */
    static String of(String value, String what) {
        Objects.requireNonNull(value, what);
        if (value.isBlank() || value.indexOf('\n') >= 0) {
            throw new IllegalArgumentException(
                    what + " must be one non-blank line (it becomes a table cell) but is '" + value + "'");
        }
        return value.strip();
    }
}
