package io.flinkdevices.model.onnx;

import io.flinkdevices.model.onnx.internal.Binding;
import io.flinkdevices.model.onnx.internal.ColumnSpec;
import io.flinkdevices.model.onnx.internal.OnnxModel;
import io.flinkdevices.model.onnx.internal.RowTensors;
import io.flinkdevices.model.onnx.internal.TensorLayout;
import io.flinkdevices.testkit.onnx.OnnxModels;

import ai.onnxruntime.OrtSession;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.binary.BinaryArrayData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.data.writer.BinaryRowWriter;
import org.apache.flink.table.runtime.typeutils.ArrayDataSerializer;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.FloatType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class OnnxModelTest {

    static final float[][] W = {{1, 2, 3}, {-1, 0.5f, 0}, {0.25f, -2, 1}, {2, 1, -1}};
    static final float[] B = {0.5f, -1, 2};
    static final float[][] W1 = {{1, -1, 0.5f, 2, 0}, {0.5f, 1, -2, 0, 1}, {-1, 0.5f, 1, 1, -0.5f}, {2, 0, 0, -1, 1}};
    static final float[] B1 = {0.1f, -0.2f, 0.3f, 0, -1};
    static final float[][] W2 = {{1, 0}, {-1, 2}, {0.5f, 0.5f}, {2, -1}, {0, 1}};
    static final float[] B2 = {1, -1};

    @TempDir
    Path dir;

    @Test
    @DisplayName("a linear layer's results equal x W + b computed in Java, for a batch of rows")
    void linearMatchesJava() throws Exception {
        Path file = OnnxModels.write(dir, "linear.onnx", OnnxModels.linear(W, B));
        List<float[]> xs = randomRows(37, 4, 1);
        List<RowData> out = runArrays(file, xs, array(new FloatType()), array(new FloatType()));
        assertThat(out).hasSize(37);
        for (int r = 0; r < xs.size(); r++) {
            float[] y = out.get(r).getArray(0).toFloatArray();
            double[] expected = OnnxModels.linearInJava(xs.get(r), W, B);
            assertThat(y).hasSize(3);
            for (int j = 0; j < 3; j++) {
                assertThat((double) y[j]).isCloseTo(expected[j], within(1e-4));
            }
        }
    }

    @Test
    @DisplayName("binary arrays (rows from the network), primitive and boxed generic arrays give the same results,"
            + " through buffers reused from a larger batch to a smaller one")
    void arrayRepresentationsAndReusedBuffers() throws Exception {
        Path file = OnnxModels.write(dir, "linear.onnx", OnnxModels.linear(W, B));
        List<float[]> xs = randomRows(30, 4, 3);
        ByteBuffer[] buffers = new ByteBuffer[1];
        for (int size : new int[] {30, 7}) {
            List<RowData> binary = new ArrayList<>();
            List<RowData> boxed = new ArrayList<>();
            for (float[] x : xs.subList(0, size)) {
                // inside a larger segment at an offset, as a field of a row read from the network
                BinaryRowData row = new BinaryRowData(1);
                BinaryRowWriter writer = new BinaryRowWriter(row);
                writer.writeArray(0, BinaryArrayData.fromPrimitiveArray(x), new ArrayDataSerializer(new FloatType()));
                writer.complete();
                binary.add(row);
                Float[] b = new Float[x.length];
                for (int i = 0; i < x.length; i++) {
                    b[i] = x[i];
                }
                boxed.add(GenericRowData.of(new GenericArrayData(b)));
            }
            for (List<RowData> rows : List.of(binary, boxed)) {
                List<RowData> out = run(file, List.of(col("x", array(new FloatType()))), List.of(col("y",
                        array(new FloatType()))), rows, buffers);
                assertThat(out).hasSize(size);
                for (int r = 0; r < size; r++) {
                    float[] y = out.get(r).getArray(0).toFloatArray();
                    double[] expected = OnnxModels.linearInJava(xs.get(r), W, B);
                    for (int j = 0; j < 3; j++) {
                        assertThat((double) y[j]).isCloseTo(expected[j], within(1e-4));
                    }
                }
            }
        }
        assertThat(buffers[0].capacity()).as("the first batch's buffer serves the smaller one").isEqualTo(30 * 4 * 4);
    }

    @Test
    @DisplayName("a two-layer MLP with Relu matches Java, and four FLOAT columns pack into its [batch, 4] input")
    void mlpWithPackedColumns() throws Exception {
        Path file = OnnxModels.write(dir, "mlp.onnx", OnnxModels.mlp(W1, B1, W2, B2));
        List<ColumnSpec> in = List.of(col("a", new FloatType()), col("b", new FloatType()), col("c", new FloatType()),
                col("d", new FloatType()));
        List<ColumnSpec> outCols = List.of(col("p", new FloatType()), col("q", new FloatType()));
        List<float[]> xs = randomRows(20, 4, 2);
        List<RowData> rows = new ArrayList<>();
        for (float[] x : xs) {
            rows.add(GenericRowData.of(x[0], x[1], x[2], x[3]));
        }
        List<RowData> out = run(file, in, outCols, rows);
        for (int r = 0; r < xs.size(); r++) {
            double[] expected = OnnxModels.mlpInJava(xs.get(r), W1, B1, W2, B2);
            assertThat((double) out.get(r).getFloat(0)).isCloseTo(expected[0], within(1e-4));
            assertThat((double) out.get(r).getFloat(1)).isCloseTo(expected[1], within(1e-4));
        }
    }

    @Test
    @DisplayName("FLOAT, DOUBLE, INT and BIGINT columns map to float, double, int32 and int64 tensors")
    void scalarTypes() throws Exception {
        Path file = OnnxModels.write(dir, "scalars.onnx", OnnxModels.scalars());
        List<ColumnSpec> in = List.of(col("f", new FloatType()), col("d", new DoubleType()), col("i", new IntType()),
                col("l", new BigIntType()));
        List<ColumnSpec> outCols = List.of(col("f2", new FloatType()), col("d2", new DoubleType()), col("i2", new IntType()),
                col("l2", new BigIntType()));
        List<RowData> out = run(file, in, outCols, List.of(GenericRowData.of(1.5f, 2.25d, 7, 1L << 40),
                GenericRowData.of(-3f, 0.1d, -8, -5L)));
        assertThat(out.get(0).getFloat(0)).isEqualTo(3f);
        assertThat(out.get(0).getDouble(1)).isEqualTo(4.5d);
        assertThat(out.get(0).getInt(2)).isEqualTo(14);
        assertThat(out.get(0).getLong(3)).isEqualTo(1L << 41);
        assertThat(out.get(1).getLong(3)).isEqualTo(-10L);
        assertThat(out.get(1).getInt(2)).isEqualTo(-16);
    }

    @Test
    @DisplayName("a row with a NULL feature is not sent to the model and gets NULL outputs; the others are computed")
    void nullRows() throws Exception {
        Path file = OnnxModels.write(dir, "linear.onnx", OnnxModels.linear(W, B));
        List<ColumnSpec> in = List.of(col("x", array(new FloatType())));
        List<ColumnSpec> outCols = List.of(col("y", array(new FloatType())));
        float[] x = {1, 2, 3, 4};
        GenericRowData nullRow = new GenericRowData(1);
        List<RowData> out = run(file, in, outCols, List.of(GenericRowData.of(new GenericArrayData(x)), nullRow,
                GenericRowData.of(new GenericArrayData(new Float[] {1f, null, 3f, 4f}))));
        assertThat(out.get(1).isNullAt(0)).isTrue();
        assertThat(out.get(2).isNullAt(0)).isTrue();
        assertThat((double) out.get(0).getArray(0).getFloat(2)).isCloseTo(OnnxModels.linearInJava(x, W, B)[2], within(1e-4));
    }

    @Test
    @DisplayName("an array of the wrong length fails its batch naming the column, its length and the model's input")
    void wrongArrayLength() throws Exception {
        Path file = OnnxModels.write(dir, "linear.onnx", OnnxModels.linear(W, B));
        List<ColumnSpec> in = List.of(col("features", array(new FloatType())));
        List<ColumnSpec> outCols = List.of(col("y", array(new FloatType())));
        assertThatThrownBy(() -> run(file, in, outCols, List.of(GenericRowData.of(new GenericArrayData(new float[] {1, 2})))))
                .hasMessageContaining("INPUT column 'features' ARRAY<FLOAT> holds an array of 2 values")
                .hasMessageContaining("x: float[batch, 4] takes 4 per row");
    }

    @Test
    @DisplayName("a missing file, a folder and a file that is not a model are each one error naming 'path' and the file")
    void badFiles() throws Exception {
        Path missing = dir.resolve("nope.onnx");
        assertThatThrownBy(() -> OnnxModel.open(missing.toString(), "path", OptionalInt.empty(), null))
                .isInstanceOf(ValidationException.class)
                .hasMessageStartingWith("'path' = " + missing + ": no such file");
        assertThatThrownBy(() -> OnnxModel.open(dir.toString(), "path", OptionalInt.empty(), null))
                .hasMessageContaining("not a regular file");
        Path text = dir.resolve("notes.onnx");
        Files.write(text, "this is not a model".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> OnnxModel.open(text.toString(), "path", OptionalInt.empty(), null))
                .isInstanceOf(ValidationException.class)
                .hasMessageStartingWith("'path' = " + text + " is not a model ONNX Runtime 1.22.0 can load: ");
    }

    @Test
    @DisplayName("'cpu-threads' is the number of threads ONNX Runtime runs a CPU batch on: 1 starts none of its own")
    void cpuThreadsAreOnnxRuntimesThreads() throws Exception {
        Assumptions.assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "counts threads in /proc/self/task (Linux)");
        Path file = OnnxModels.write(dir, "linear.onnx", OnnxModels.linear(W, B));
        // ONNX Runtime's threads are started by this thread and carry its name, which no JVM thread does
        String name = Files.readString(Path.of("/proc/thread-self/comm")).trim();
        try (OnnxModel warm = OnnxModel.open(file.toString(), "path", OptionalInt.empty(), null, 1)) {
            long before = threadsNamed(name);
            try (OnnxModel one = OnnxModel.open(file.toString(), "path", OptionalInt.empty(), null, 1)) {
                assertThat(threadsNamed(name)).as("threads a 1-thread session adds").isEqualTo(before);
            }
            try (OnnxModel four = OnnxModel.open(file.toString(), "path", OptionalInt.empty(), null, 4)) {
                assertThat(threadsNamed(name)).as("threads a 4-thread session adds beside the caller's").isEqualTo(before + 3);
            }
            assertThat(threadsNamed(name)).as("threads after the session closed").isEqualTo(before);
        }
    }

    private static long threadsNamed(String name) throws Exception {
        long n = 0;
        try (java.util.stream.Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    if (Files.readString(t.resolve("comm")).trim().equals(name)) {
                        n++;
                    }
                } catch (java.io.IOException gone) {
                    // the thread ended while we looked
                }
            }
        }
        return n;
    }

    @Test
    @DisplayName("a CUDA device asked of the CPU build opens the model on the CPU")
    void cudaFallsBackToCpu() throws Exception {
        Path file = OnnxModels.write(dir, "linear.onnx", OnnxModels.linear(W, B));
        try (OnnxModel m = OnnxModel.open(file.toString(), "path", OptionalInt.of(1), "gpu: #1")) {
            assertThat(m.device()).isEqualTo("CPU");
        }
    }

    @Test
    @DisplayName("a column that does not match the model names the column, the model's input and what to declare")
    void mismatches() throws Exception {
        Path file = OnnxModels.write(dir, "linear.onnx", OnnxModels.linear(W, B));
        List<ColumnSpec> outCols = List.of(col("y", array(new FloatType())));
        assertThatThrownBy(() -> run(file, List.of(col("x", array(new DoubleType()))), outCols, List.of()))
                .isInstanceOf(ValidationException.class)
                .hasMessage("INPUT column 'x' ARRAY<DOUBLE> does not match the model's input x: float[batch, 4] (model file "
                        + file + "): declare it ARRAY<FLOAT> of 4 values");
        assertThatThrownBy(() -> run(file, List.of(col("a", new FloatType()), col("b", new FloatType())), outCols, List.of()))
                .hasMessageStartingWith("INPUT declares 2 scalar columns ('a' FLOAT, 'b' FLOAT) but the model's input"
                        + " x: float[batch, 4] takes 4 values per row");
        assertThatThrownBy(() -> run(file, List.of(col("x", array(new FloatType()))), List.of(col("y", new FloatType())),
                List.of()))
                .hasMessageStartingWith("OUTPUT column 'y' FLOAT does not match the model's output y: float[batch, 3]")
                .hasMessageEndingWith("declare it ARRAY<FLOAT> of 3 values");
        assertThatThrownBy(() -> run(file, List.of(col("x", new VarCharType(10))), outCols, List.of()))
                .hasMessageStartingWith("INPUT column 'x' VARCHAR(10) has a type the ONNX provider cannot map");
        Path fixed = OnnxModels.write(dir, "fixed.onnx", OnnxModels.fixedBatch());
        assertThatThrownBy(() -> run(fixed, List.of(col("x", array(new FloatType()))), outCols, List.of()))
                .hasMessageContaining("x: float[1, 3] has a fixed first dimension of 1")
                .hasMessageContaining("dynamic_axes={'x': {0: 'batch'}}");
    }

    static ColumnSpec col(String name, LogicalType type) {
        return new ColumnSpec(name, type);
    }

    static LogicalType array(LogicalType element) {
        return new ArrayType(element);
    }

    static List<float[]> randomRows(int n, int width, long seed) {
        Random random = new Random(seed);
        List<float[]> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            float[] x = new float[width];
            for (int j = 0; j < width; j++) {
                x[j] = random.nextFloat() * 4 - 2;
            }
            out.add(x);
        }
        return out;
    }

    private static List<RowData> runArrays(Path file, List<float[]> xs, LogicalType in, LogicalType out) throws Exception {
        List<RowData> rows = new ArrayList<>();
        for (float[] x : xs) {
            rows.add(GenericRowData.of(new GenericArrayData(x)));
        }
        return run(file, List.of(col("x", in)), List.of(col("y", out)), rows);
    }

    private static List<RowData> run(Path file, List<ColumnSpec> in, List<ColumnSpec> out, List<RowData> rows)
            throws Exception {
        return run(file, in, out, rows, new ByteBuffer[in.size()]);
    }

    private static List<RowData> run(Path file, List<ColumnSpec> in, List<ColumnSpec> out, List<RowData> rows,
            ByteBuffer[] buffers) throws Exception {
        try (OnnxModel m = OnnxModel.open(file.toString(), "path", OptionalInt.empty(), null);
                OrtSession.RunOptions options = new OrtSession.RunOptions()) {
            List<Binding> ins = TensorLayout.bind("INPUT", in, m.inputs(), file.toString());
            List<Binding> outs = TensorLayout.bind("OUTPUT", out, m.outputs(), file.toString());
            boolean[] sent = new boolean[rows.size()];
            List<RowData> toModel = new ArrayList<>();
            for (int i = 0; i < rows.size(); i++) {
                if (!RowTensors.hasNull(rows.get(i), ins)) {
                    sent[i] = true;
                    toModel.add(rows.get(i));
                }
            }
            if (toModel.isEmpty()) {
                return List.of();
            }
            return RowTensors.decode(m.run(RowTensors.encode(toModel, ins, buffers, file.toString()), options), outs, out.size(), sent,
                    toModel.size(), file.toString());
        }
    }
}
