package io.flinkdevices.model.onnx.internal;

import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.LogicalType;

import java.io.Serializable;
import java.util.Objects;
import java.util.Optional;

/** A column of the model's INPUT or OUTPUT schema. */
public final class ColumnSpec implements Serializable {

    private static final long serialVersionUID = 1L;

    private final String name;
    private final LogicalType type;

    public ColumnSpec(String name, LogicalType type) {
        this.name = Objects.requireNonNull(name);
        this.type = Objects.requireNonNull(type);
    }

    public String name() {
        return name;
    }

    public LogicalType type() {
        return type;
    }

    /** The element type of a FLOAT/DOUBLE/INT/BIGINT column. */
    public Optional<ElementType> scalar() {
        return ElementType.ofScalar(type);
    }

    /** The element type of an ARRAY of FLOAT/DOUBLE/INT/BIGINT column. */
    public Optional<ElementType> arrayOf() {
        if (type instanceof ArrayType) {
            return ElementType.ofScalar(((ArrayType) type).getElementType());
        }
        return Optional.empty();
    }

    /** {@code 'a' FLOAT}. */
    @Override
    public String toString() {
        return "'" + name + "' " + type.asSummaryString();
    }
}
