package io.flinkdevices.model.onnx.internal;

import org.apache.flink.table.api.ValidationException;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Matches a model's INPUT or OUTPUT columns to the model file's inputs or outputs, in the model's
 * order: one column per tensor, or k scalar columns for a model with a single [batch, k] tensor.
 * Every mismatch is one {@link ValidationException} that names the column, the tensor and the file.
 */
public final class TensorLayout {

    private TensorLayout() {}

    /**
     * @param side {@code INPUT} or {@code OUTPUT}
     * @param model the model file, as messages name it
     */
    public static List<Binding> bind(String side, List<ColumnSpec> columns, List<TensorSpec> tensors, String model) {
        String what = "INPUT".equals(side) ? "input" : "output";
        for (TensorSpec t : tensors) {
            checkTensor(what, t, model);
        }
        for (ColumnSpec c : columns) {
            if (c.scalar().isEmpty() && c.arrayOf().isEmpty()) {
                throw new ValidationException(side + " column " + c + " has a type the ONNX provider cannot map; columns"
                        + " must be FLOAT, DOUBLE, INT, BIGINT or an ARRAY of one of them (model file " + model + ")");
            }
        }
        List<Binding> out = new ArrayList<>();
        if (columns.size() == tensors.size()) {
            for (int i = 0; i < columns.size(); i++) {
                out.add(pair(side, what, i, columns.get(i), tensors.get(i), model));
            }
            return out;
        }
        if (tensors.size() == 1 && tensors.get(0).rank() == 2 && columns.stream().allMatch(c -> c.scalar().isPresent())) {
            TensorSpec t = tensors.get(0);
            if (columns.size() != t.width()) {
                throw new ValidationException(side + " declares " + columns.size() + " scalar columns (" + list(columns)
                        + ") but the model's " + what + " " + t + " takes " + t.width() + " values per row (model file "
                        + model + "): declare " + t.width() + " " + t.element().sqlName() + " columns, or one ARRAY<"
                        + t.element().sqlName() + "> column");
            }
            int[] positions = new int[columns.size()];
            for (int i = 0; i < columns.size(); i++) {
                ColumnSpec c = columns.get(i);
                if (c.scalar().get() != t.element()) {
                    throw new ValidationException(side + " column " + c + " does not match the model's " + what + " " + t
                            + " (model file " + model + "): declare it " + t.element().sqlName());
                }
                positions[i] = i;
            }
            out.add(new Binding(Binding.Kind.PACKED, positions, columns, t, columns.size()));
            return out;
        }
        throw new ValidationException(side + " declares " + columns.size() + " columns (" + list(columns) + ") but the model"
                + " has " + tensors.size() + " " + what + "s (" + tensors.stream().map(String::valueOf).collect(Collectors.joining(", "))
                + "; model file " + model + "): declare one column per model " + what + ", in the model's order, or, for a"
                + " model with one [batch, k] " + what + ", k scalar columns");
    }

    private static Binding pair(String side, String what, int index, ColumnSpec c, TensorSpec t, String model) {
        Optional<ElementType> scalar = c.scalar();
        Optional<ElementType> array = c.arrayOf();
        if (scalar.isPresent() && t.width() == 1 && scalar.get() == t.element()) {
            return new Binding(Binding.Kind.SCALAR, new int[] {index}, List.of(c), t, 1);
        }
        if (array.isPresent() && t.rank() == 2 && array.get() == t.element()) {
            return new Binding(Binding.Kind.ARRAY, new int[] {index}, List.of(c), t, (int) t.width());
        }
        String expected = t.width() == 1 && t.rank() == 1
                ? t.element().sqlName()
                : t.width() == 1
                        ? t.element().sqlName() + " (or ARRAY<" + t.element().sqlName() + "> of 1 value)"
                        : "ARRAY<" + t.element().sqlName() + "> of " + t.width() + " values";
        throw new ValidationException(side + " column " + c + " does not match the model's " + what + " " + t
                + " (model file " + model + "): declare it " + expected);
    }

    private static void checkTensor(String what, TensorSpec t, String model) {
        if (t.element() == null) {
            throw new ValidationException("the model's " + what + " " + t + " has an element type the ONNX provider cannot"
                    + " map (model file " + model + "); it maps float, double, int32 and int64 tensors");
        }
        long[] shape = t.shape();
        if (shape.length < 1 || shape.length > 2) {
            throw new ValidationException("the model's " + what + " " + t + " has rank " + shape.length + " (model file "
                    + model + "); the ONNX provider maps tensors of shape [batch] or [batch, k]");
        }
        if (shape[0] >= 0) {
            throw new ValidationException("the model's " + what + " " + t + " has a fixed first dimension of " + shape[0]
                    + " (model file " + model + "); the ONNX provider sends rows in batches and needs a free batch"
                    + " dimension: export the model with a dynamic first axis (torch.onnx.export(..., dynamic_axes="
                    + "{'" + t.name() + "': {0: 'batch'}}))");
        }
        if (shape.length == 2 && shape[1] < 1) {
            throw new ValidationException("the model's " + what + " " + t + " has a free second dimension (model file "
                    + model + "); the ONNX provider needs its size fixed in the model");
        }
    }

    private static String list(List<ColumnSpec> columns) {
        return columns.stream().map(String::valueOf).collect(Collectors.joining(", "));
    }
}
