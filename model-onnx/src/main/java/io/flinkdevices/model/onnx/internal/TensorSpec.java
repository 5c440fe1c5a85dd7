package io.flinkdevices.model.onnx.internal;

import java.io.Serializable;
import java.util.Arrays;
import java.util.Objects;

/** One input or output of a model: its name, element type as ONNX says it, and shape (-1 for a free dimension). */
public final class TensorSpec implements Serializable {

    private static final long serialVersionUID = 1L;

    private final String name;
    private final String onnxType;
    private final ElementType element;
    private final long[] shape;

    public TensorSpec(String name, String onnxType, ElementType element, long[] shape) {
        this.name = Objects.requireNonNull(name);
        this.onnxType = onnxType;
        this.element = element;
        this.shape = shape.clone();
    }

    public String name() {
        return name;
    }

    /** Null when the type is none of ours (string, float16, a sequence, ...). */
    public ElementType element() {
        return element;
    }

    public long[] shape() {
        return shape.clone();
    }

    public int rank() {
        return shape.length;
    }

    /** The number of values per row: 1 for [batch] and [batch, 1], k for [batch, k]; -1 when it is not fixed. */
    public long width() {
        if (shape.length == 1) {
            return 1;
        }
        return shape.length == 2 ? shape[1] : -1;
    }

    /** {@code x: float[batch, 4]}. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder(name).append(": ").append(element == null ? onnxType : element.onnxName()).append('[');
        for (int i = 0; i < shape.length; i++) {
            b.append(i == 0 ? "" : ", ").append(shape[i] < 0 ? (i == 0 ? "batch" : "?") : String.valueOf(shape[i]));
        }
        return b.append(']').toString();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof TensorSpec)) {
            return false;
        }
        TensorSpec t = (TensorSpec) o;
        return name.equals(t.name) && Objects.equals(onnxType, t.onnxType) && Arrays.equals(shape, t.shape);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, onnxType, Arrays.hashCode(shape));
    }
}
