package io.flinkdevices.model.onnx.internal;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtException;
import org.apache.flink.table.data.ArrayData;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryArrayData;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** Turns rows into input tensors and output tensors into rows. */
public final class RowTensors {

    private RowTensors() {}

    /** One input tensor's data, in native byte order for ONNX Runtime to use without a copy. */
    public static final class Input {
        final Binding binding;
        final ByteBuffer buffer;
        final long[] shape;

        Input(Binding binding, ByteBuffer buffer, long[] shape) {
            this.binding = binding;
            this.buffer = buffer;
            this.shape = shape;
        }
    }

    /** One output tensor copied out of ONNX Runtime: a float[], double[], int[] or long[], and its shape. */
    public static final class Output {
        final Object values;
        final long[] shape;

        Output(Object values, long[] shape) {
            this.values = values;
            this.shape = shape;
        }
    }

    /** Whether a bound value of {@code row} is NULL (or an ARRAY holds a NULL): such a row is not sent to the model. */
    public static boolean hasNull(RowData row, List<Binding> bindings) {
        for (Binding b : bindings) {
            for (int c : b.columnPositions()) {
                if (row.isNullAt(c)) {
                    return true;
                }
                if (b.kind() == Binding.Kind.ARRAY) {
                    ArrayData a = row.getArray(c);
                    if (a instanceof BinaryArrayData) {
                        if (((BinaryArrayData) a).anyNull()) {
                            return true;
                        }
                        continue;
                    }
                    for (int i = 0; i < a.size(); i++) {
                        if (a.isNullAt(i)) {
                            return true;
                        }
                    }
                }
            }
        }
        return false;
    }

    /**
     * The input tensors for {@code rows}, none of which has a NULL, written into {@code buffers} (one
     * per binding, cleared here) where they are large enough, else into new ones.
     *
     * @throws IllegalArgumentException when an ARRAY value has not the model's width
     */
    public static List<Input> encode(List<RowData> rows, List<Binding> bindings, ByteBuffer[] buffers, String model) {
        List<Input> out = new ArrayList<>(bindings.size());
        int n = rows.size();
        for (int k = 0; k < bindings.size(); k++) {
            Binding b = bindings.get(k);
            int width = b.width();
            int bytes = n * width * b.element().bytes();
            ByteBuffer buf = buffers[k];
            if (buf == null || buf.capacity() < bytes) {
                buf = ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
                buffers[k] = buf;
            }
            buf.clear();
            int[] cols = b.columnPositions();
            for (RowData row : rows) {
                if (b.kind() == Binding.Kind.ARRAY) {
                    ArrayData a = row.getArray(cols[0]);
                    if (a.size() != width) {
                        throw new IllegalArgumentException("INPUT column " + b.columnSpecs().get(0) + " holds an array of "
                                + a.size() + " values but the model's input " + b.tensor() + " takes " + width
                                + " per row (model file " + model + ")");
                    }
                    putArray(buf, b.element(), a, width);
                } else {
                    for (int c : cols) {
                        putScalar(buf, b.element(), row, c);
                    }
                }
            }
            buf.flip();
            out.add(new Input(b, buf, b.shape(n)));
        }
        return out;
    }

    /** Bound tensors' buffers for {@link #encode}, one per binding, empty until a batch needs them. */
    public static ByteBuffer[] buffers(List<Binding> bindings) {
        return new ByteBuffer[bindings.size()];
    }

    /**
     * The output rows for a batch: {@code sent[i]} says whether row i went to the model (rows with a
     * NULL did not and get NULL outputs).
     */
    public static List<RowData> decode(Map<String, Output> outputs, List<Binding> bindings, int arity, boolean[] sent,
            int sentCount, String model) {
        List<RowData> rows = new ArrayList<>(sent.length);
        for (int i = 0; i < sent.length; i++) {
            rows.add(new GenericRowData(arity));
        }
        for (Binding b : bindings) {
            Output o = outputs.get(b.tensor().name());
            if (o == null) {
                throw new IllegalStateException("the model did not return its output " + b.tensor() + " (model file " + model + ")");
            }
            long expected = (long) sentCount * b.width();
            if (o.shape.length == 0 || o.shape[0] != sentCount || java.lang.reflect.Array.getLength(o.values) != expected) {
                throw new IllegalStateException("the model's output " + b.tensor() + " came back with shape "
                        + Arrays.toString(o.shape) + " for a batch of " + sentCount + " rows; expected " + sentCount + " x "
                        + b.width() + " values (model file " + model + ")");
            }
            int k = 0;
            int[] cols = b.columnPositions();
            for (int i = 0; i < sent.length; i++) {
                if (!sent[i]) {
                    continue;
                }
                GenericRowData row = (GenericRowData) rows.get(i);
                int base = k * b.width();
                if (b.kind() == Binding.Kind.ARRAY) {
                    row.setField(cols[0], array(o.values, base, b.width()));
                } else {
                    for (int j = 0; j < cols.length; j++) {
                        row.setField(cols[j], scalar(o.values, base + j));
                    }
                }
                k++;
            }
        }
        return rows;
    }

    static Output copyOut(String name, OnnxValue value) throws OrtException {
        if (!(value instanceof OnnxTensor)) {
            return new Output(new float[0], new long[0]);
        }
        OnnxTensor t = (OnnxTensor) value;
        long[] shape = t.getInfo().getShape();
        switch (t.getInfo().type) {
            case FLOAT: {
                FloatBuffer b = t.getFloatBuffer();
                float[] a = new float[b.remaining()];
                b.get(a);
                return new Output(a, shape);
            }
            case DOUBLE: {
                DoubleBuffer b = t.getDoubleBuffer();
                double[] a = new double[b.remaining()];
                b.get(a);
                return new Output(a, shape);
            }
            case INT32: {
                IntBuffer b = t.getIntBuffer();
                int[] a = new int[b.remaining()];
                b.get(a);
                return new Output(a, shape);
            }
            case INT64: {
                LongBuffer b = t.getLongBuffer();
                long[] a = new long[b.remaining()];
                b.get(a);
                return new Output(a, shape);
            }
            default:
                throw new IllegalStateException("the model's output '" + name + "' came back as " + t.getInfo().type
                        + "; expected float, double, int32 or int64");
        }
    }

    private static Object scalar(Object values, int i) {
        if (values instanceof float[]) {
            return ((float[]) values)[i];
        }
        if (values instanceof double[]) {
            return ((double[]) values)[i];
        }
        if (values instanceof int[]) {
            return ((int[]) values)[i];
        }
        return ((long[]) values)[i];
    }

    private static ArrayData array(Object values, int from, int width) {
        if (values instanceof float[]) {
            return new GenericArrayData(Arrays.copyOfRange((float[]) values, from, from + width));
        }
        if (values instanceof double[]) {
            return new GenericArrayData(Arrays.copyOfRange((double[]) values, from, from + width));
        }
        if (values instanceof int[]) {
            return new GenericArrayData(Arrays.copyOfRange((int[]) values, from, from + width));
        }
        return new GenericArrayData(Arrays.copyOfRange((long[]) values, from, from + width));
    }

    private static void putScalar(ByteBuffer buf, ElementType e, RowData row, int c) {
        switch (e) {
            case FLOAT:
                buf.putFloat(row.getFloat(c));
                break;
            case DOUBLE:
                buf.putDouble(row.getDouble(c));
                break;
            case INT32:
                buf.putInt(row.getInt(c));
                break;
            default:
                buf.putLong(row.getLong(c));
        }
    }

    /**
     * Writes one ARRAY value. A binary array (what rows from the network or from state hold) keeps
     * its elements as native-order bytes (as the tensor wants them) after its header, so they are copied in one go; a generic
     * one over a primitive array goes in one bulk put; only a generic array of boxed values goes
     * element by element.
     */
    private static void putArray(ByteBuffer buf, ElementType e, ArrayData a, int width) {
        int bytes = width * e.bytes();
        if (a instanceof BinaryArrayData) {
            BinaryArrayData b = (BinaryArrayData) a;
            int start = b.getOffset() + BinaryArrayData.calculateHeaderInBytes(width);
            if (b.getSegments().length == 1) {
                b.getSegments()[0].get(start, buf, bytes);
                return;
            }
        }
        if (a instanceof GenericArrayData && ((GenericArrayData) a).isPrimitiveArray()) {
            int at = buf.position();
            switch (e) {
                case FLOAT:
                    buf.asFloatBuffer().put(a.toFloatArray());
                    break;
                case DOUBLE:
                    buf.asDoubleBuffer().put(a.toDoubleArray());
                    break;
                case INT32:
                    buf.asIntBuffer().put(a.toIntArray());
                    break;
                default:
                    buf.asLongBuffer().put(a.toLongArray());
            }
            buf.position(at + bytes);
            return;
        }
        for (int i = 0; i < width; i++) {
            putArrayElement(buf, e, a, i);
        }
    }

    private static void putArrayElement(ByteBuffer buf, ElementType e, ArrayData a, int i) {
        switch (e) {
            case FLOAT:
                buf.putFloat(a.getFloat(i));
                break;
            case DOUBLE:
                buf.putDouble(a.getDouble(i));
                break;
            case INT32:
                buf.putInt(a.getInt(i));
                break;
            default:
                buf.putLong(a.getLong(i));
        }
    }
}
