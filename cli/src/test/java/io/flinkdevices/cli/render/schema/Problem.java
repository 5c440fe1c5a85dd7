package io.flinkdevices.cli.render.schema;

/**
 * One place where a document does not fit its schema.
 *
 * @param kind what is wrong
 * @param path where, as a JSON path from the document's root: {@code $.spec.containers[0].name},
 *     with {@code ['...']} for keys that are not plain identifiers ({@code
 *     $.spec.flinkConfiguration['taskmanager.numberOfTaskSlots']})
 * @param message what the schema expected there
 */
public record Problem(Kind kind, String path, String message) {

    /** What is wrong at a {@link Problem#path() path}. */
    public enum Kind {
        /** A field the schema does not know: the API server drops it, without an error. */
        PRUNED,
        /** A value of the wrong JSON type (or {@code null} where no null is allowed). */
        TYPE,
        /** A field the schema requires is missing. */
        REQUIRED,
        /** A value outside the schema's {@code enum}. */
        ENUM
    }

    @Override
    public String toString() {
        return kind + " " + path + ": " + message;
    }
}
