package io.flinkdevices.testkit.onnx;

import org.apache.flink.annotation.Experimental;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes small ONNX models with known weights, encoding ONNX's {@code ModelProto} protobuf by hand
 * (IR version 8, opset 13), so that no test or sample downloads a model or needs the protobuf
 * compiler, and computes the same models in plain Java to check what a runtime returns. Every
 * model takes a batch of rows: its first dimension is the symbolic {@code batch} (except {@link
 * #fixedBatch()}).
 *
 * <pre>{@code
 * Path file = OnnxModels.write(dir, "scorer.onnx", OnnxModels.linear(w, b));
 * double[] expected = OnnxModels.linearInJava(x, w, b);
 * }</pre>
 */
@Experimental
public final class OnnxModels {

    /** ONNX's {@code TensorProto.DataType} number of float. */
    public static final int FLOAT = 1;
    /** ONNX's {@code TensorProto.DataType} number of int32. */
    public static final int INT32 = 6;
    /** ONNX's {@code TensorProto.DataType} number of int64. */
    public static final int INT64 = 7;
    /** ONNX's {@code TensorProto.DataType} number of double. */
    public static final int DOUBLE = 11;

    private OnnxModels() {}

    /** {@code y = x W + b}: input {@code x} float [batch, k], output {@code y} float [batch, m]; {@code w} is k rows of m. */
    public static byte[] linear(float[][] w, float[] b) {
        int k = w.length;
        int m = b.length;
        Proto graph = new Proto()
                .message(1, node("MatMul", new String[] {"x", "W"}, "xw"))
                .message(1, node("Add", new String[] {"xw", "B"}, "y"))
                .string(2, "linear")
                .message(5, floatTensor("W", flatten(w), k, m))
                .message(5, floatTensor("B", b, m))
                .message(11, valueInfo("x", FLOAT, -1, k))
                .message(12, valueInfo("y", FLOAT, -1, m));
        return model(graph);
    }

    /** {@code y = relu(x W1 + b1) W2 + b2}, x float [batch, k], y float [batch, m]. */
    public static byte[] mlp(float[][] w1, float[] b1, float[][] w2, float[] b2) {
        int k = w1.length;
        int h = b1.length;
        int m = b2.length;
        Proto graph = new Proto()
                .message(1, node("MatMul", new String[] {"x", "W1"}, "a"))
                .message(1, node("Add", new String[] {"a", "B1"}, "z"))
                .message(1, node("Relu", new String[] {"z"}, "r"))
                .message(1, node("MatMul", new String[] {"r", "W2"}, "c"))
                .message(1, node("Add", new String[] {"c", "B2"}, "y"))
                .string(2, "mlp")
                .message(5, floatTensor("W1", flatten(w1), k, h))
                .message(5, floatTensor("B1", b1, h))
                .message(5, floatTensor("W2", flatten(w2), h, m))
                .message(5, floatTensor("B2", b2, m))
                .message(11, valueInfo("x", FLOAT, -1, k))
                .message(12, valueInfo("y", FLOAT, -1, m));
        return model(graph);
    }

    /**
     * One input per scalar type and one output each: {@code f2 = f * 2} (float [batch]), {@code d2 = d * 2}
     * (double [batch]), {@code i2 = i + i} (int32 [batch, 1]), {@code l2 = l + l} (int64 [batch]).
     */
    public static byte[] scalars() {
        Proto graph = new Proto()
                .message(1, node("Add", new String[] {"f", "f"}, "f2"))
                .message(1, node("Add", new String[] {"d", "d"}, "d2"))
                .message(1, node("Add", new String[] {"i", "i"}, "i2"))
                .message(1, node("Add", new String[] {"l", "l"}, "l2"))
                .string(2, "scalars")
                .message(11, valueInfo("f", FLOAT, -1))
                .message(11, valueInfo("d", DOUBLE, -1))
                .message(11, valueInfo("i", INT32, -1, 1))
                .message(11, valueInfo("l", INT64, -1))
                .message(12, valueInfo("f2", FLOAT, -1))
                .message(12, valueInfo("d2", DOUBLE, -1))
                .message(12, valueInfo("i2", INT32, -1, 1))
                .message(12, valueInfo("l2", INT64, -1));
        return model(graph);
    }

    /** {@code y = x W + b} with a fixed batch of 1: a model exported without a dynamic batch axis. */
    public static byte[] fixedBatch() {
        Proto graph = new Proto()
                .message(1, node("Add", new String[] {"x", "x"}, "y"))
                .string(2, "fixed")
                .message(11, valueInfo("x", FLOAT, 1, 3))
                .message(12, valueInfo("y", FLOAT, 1, 3));
        return model(graph);
    }

    /** Writes {@code model} to {@code dir/name} and returns that path. */
    public static Path write(Path dir, String name, byte[] model) throws IOException {
        Path file = dir.resolve(name);
        Files.write(file, model);
        return file;
    }

    /** x W + b in plain Java, in double precision. */
    public static double[] linearInJava(float[] x, float[][] w, float[] b) {
        double[] y = new double[b.length];
        for (int j = 0; j < b.length; j++) {
            double s = b[j];
            for (int i = 0; i < x.length; i++) {
                s += (double) x[i] * w[i][j];
            }
            y[j] = s;
        }
        return y;
    }

    /** relu(x W1 + b1) W2 + b2 in plain Java. */
    public static double[] mlpInJava(float[] x, float[][] w1, float[] b1, float[][] w2, float[] b2) {
        double[] h = linearInJava(x, w1, b1);
        float[] r = new float[h.length];
        for (int i = 0; i < h.length; i++) {
            r[i] = (float) Math.max(0, h[i]);
        }
        return linearInJava(r, w2, b2);
    }

    private static byte[] model(Proto graph) {
        return new Proto()
                .varint(1, 8)
                .string(2, "flink-devices-testkit")
                .message(7, graph)
                .message(8, new Proto().string(1, "").varint(2, 13))
                .bytes();
    }

    private static Proto node(String op, String[] inputs, String output) {
        Proto p = new Proto();
        for (String in : inputs) {
            p.string(1, in);
        }
        return p.string(2, output).string(3, op + "_" + output).string(4, op);
    }

    private static Proto floatTensor(String name, float[] values, long... dims) {
        ByteBuffer raw = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (float v : values) {
            raw.putFloat(v);
        }
        Proto p = new Proto();
        for (long d : dims) {
            p.varint(1, d);
        }
        return p.varint(2, FLOAT).string(8, name).raw(9, raw.array());
    }

    /** A tensor value info; a dimension of -1 is the symbolic {@code batch}. */
    private static Proto valueInfo(String name, int elemType, long... dims) {
        Proto shape = new Proto();
        for (long d : dims) {
            shape.message(1, d < 0 ? new Proto().string(2, "batch") : new Proto().varint(1, d));
        }
        Proto tensor = new Proto().varint(1, elemType).message(2, shape);
        return new Proto().string(1, name).message(2, new Proto().message(1, tensor));
    }

    private static float[] flatten(float[][] m) {
        float[] out = new float[m.length * m[0].length];
        for (int i = 0; i < m.length; i++) {
            System.arraycopy(m[i], 0, out, i * m[0].length, m[0].length);
        }
        return out;
    }

    /** The few protobuf wire types ONNX needs: varints and length-delimited fields. */
    private static final class Proto {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Proto varint(int field, long value) {
            writeVarint((long) field << 3);
            writeVarint(value);
            return this;
        }

        Proto string(int field, String value) {
            return raw(field, value.getBytes(StandardCharsets.UTF_8));
        }

        Proto message(int field, Proto value) {
            return raw(field, value.bytes());
        }

        Proto raw(int field, byte[] value) {
            writeVarint(((long) field << 3) | 2);
            writeVarint(value.length);
            out.write(value, 0, value.length);
            return this;
        }

        byte[] bytes() {
            return out.toByteArray();
        }

        private void writeVarint(long v) {
            while ((v & ~0x7FL) != 0) {
                out.write((int) ((v & 0x7F) | 0x80));
                v >>>= 7;
            }
            out.write((int) v);
        }
    }
}
