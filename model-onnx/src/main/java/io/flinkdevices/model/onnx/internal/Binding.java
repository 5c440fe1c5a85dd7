package io.flinkdevices.model.onnx.internal;

import java.io.Serializable;
import java.util.List;

/**
 * How columns fill one model tensor, or are filled from one: a scalar column per [batch] or
 * [batch, 1] tensor, an ARRAY column per [batch, k] tensor, or k scalar columns packed into one
 * [batch, k] tensor.
 */
public final class Binding implements Serializable {

    private static final long serialVersionUID = 1L;

    /** How the columns lie in the tensor. */
    public enum Kind { SCALAR, ARRAY, PACKED }

    private final Kind kind;
    private final int[] columns;
    private final List<ColumnSpec> columnSpecs;
    private final TensorSpec tensor;
    private final int width;

    Binding(Kind kind, int[] columns, List<ColumnSpec> columnSpecs, TensorSpec tensor, int width) {
        this.kind = kind;
        this.columns = columns.clone();
        this.columnSpecs = List.copyOf(columnSpecs);
        this.tensor = tensor;
        this.width = width;
    }

    public Kind kind() {
        return kind;
    }

    /** Positions of the bound columns in their schema. */
    public int[] columns() {
        return columns.clone();
    }

    /** {@link #columns()} without the copy, for the per-row paths of this package. */
    int[] columnPositions() {
        return columns;
    }

    public List<ColumnSpec> columnSpecs() {
        return columnSpecs;
    }

    public TensorSpec tensor() {
        return tensor;
    }

    public ElementType element() {
        return tensor.element();
    }

    /** Values per row. */
    public int width() {
        return width;
    }

    /** The tensor's shape for {@code rows} rows. */
    public long[] shape(int rows) {
        return tensor.rank() == 1 ? new long[] {rows} : new long[] {rows, width};
    }
}
