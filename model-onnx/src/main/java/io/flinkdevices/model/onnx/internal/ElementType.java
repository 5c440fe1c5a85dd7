package io.flinkdevices.model.onnx.internal;

import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;

import java.util.Optional;

/** The tensor element types a column maps to, with the SQL type of each. */
public enum ElementType {
    FLOAT("float", LogicalTypeRoot.FLOAT, 4),
    DOUBLE("double", LogicalTypeRoot.DOUBLE, 8),
    INT32("int32", LogicalTypeRoot.INTEGER, 4),
    INT64("int64", LogicalTypeRoot.BIGINT, 8);

    private final String onnxName;
    private final LogicalTypeRoot sqlRoot;
    private final int bytes;

    ElementType(String onnxName, LogicalTypeRoot sqlRoot, int bytes) {
        this.onnxName = onnxName;
        this.sqlRoot = sqlRoot;
        this.bytes = bytes;
    }

    /** As ONNX names it: {@code float}, {@code int64}. */
    public String onnxName() {
        return onnxName;
    }

    /** As SQL names it: {@code FLOAT}, {@code BIGINT}. */
    public String sqlName() {
        return sqlRoot == LogicalTypeRoot.INTEGER ? "INT" : sqlRoot.name();
    }

    public int bytes() {
        return bytes;
    }

    /** The element type of a scalar SQL type, if it is one of ours. */
    public static Optional<ElementType> ofScalar(LogicalType type) {
        for (ElementType e : values()) {
            if (e.sqlRoot == type.getTypeRoot()) {
                return Optional.of(e);
            }
        }
        return Optional.empty();
    }

    /** The element type of an ONNX Runtime Java type name ({@code FLOAT}, {@code INT64}), if it is one of ours. */
    public static Optional<ElementType> ofOnnxJavaType(String name) {
        switch (name) {
            case "FLOAT":
                return Optional.of(FLOAT);
            case "DOUBLE":
                return Optional.of(DOUBLE);
            case "INT32":
                return Optional.of(INT32);
            case "INT64":
                return Optional.of(INT64);
            default:
                return Optional.empty();
        }
    }
}
