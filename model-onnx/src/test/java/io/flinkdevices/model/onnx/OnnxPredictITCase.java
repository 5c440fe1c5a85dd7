package io.flinkdevices.model.onnx;

import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.onnx.OnnxModels;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.ColumnList;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.apache.flink.table.api.Expressions.$;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/**
 * ML_PREDICT on a local device cluster whose TaskManager has two simulated GPUs: two tasks, each
 * leasing its own GPU and running the model on the CPU (the simulated GPUs are no CUDA devices),
 * through SQL and through the Table API.
 */
class OnnxPredictITCase {

    private static final int ROWS = 500;

    @TempDir
    static Path dir;

    private static LocalDeviceCluster cluster;
    private static Path linear;
    private static Path mlp;

    @BeforeAll
    static void start() throws Exception {
        linear = OnnxModels.write(dir, "linear.onnx", OnnxModels.linear(OnnxModelTest.W, OnnxModelTest.B));
        mlp = OnnxModels.write(dir, "mlp.onnx", OnnxModels.mlp(OnnxModelTest.W1, OnnxModelTest.B1, OnnxModelTest.W2,
                OnnxModelTest.B2));
        cluster = LocalDeviceCluster.builder()
                .simulatedGpus("gpu", 2, Map.of("count", "2"))
                .slotsPerTaskManager(2)
                // SQL's exchanges (source to ML_PREDICT to the collect sink) need more buffers than the default 16m
                .set("taskmanager.memory.network.min", "64m")
                .set("taskmanager.memory.network.max", "64m")
                .set("restart-strategy.type", "none")
                .build()
                .start();
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /** A parallel source of ROWS rows: id 0..ROWS-1 and x, four random floats from -2 to 2. */
    private static StreamTableEnvironment tableEnv() {
        StreamExecutionEnvironment env = cluster.createEnvironment();
        env.setParallelism(2);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        tEnv.executeSql("CREATE TEMPORARY TABLE features (id BIGINT, x ARRAY<FLOAT>) WITH ('connector' = 'datagen',"
                + " 'number-of-rows' = '" + ROWS + "', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0',"
                + " 'fields.id.end' = '" + (ROWS - 1) + "', 'fields.x.length' = '4', 'fields.x.element.min' = '-2',"
                + " 'fields.x.element.max' = '2')");
        return tEnv;
    }

    @Test
    @DisplayName("SQL: every row's ML_PREDICT result equals x W + b, each of the two tasks on its own leased GPU")
    void sqlOnLeasedGpus() throws Exception {
        try (CapturedLog log = new CapturedLog()) {
            StreamTableEnvironment tEnv = tableEnv();
            tEnv.executeSql("CREATE MODEL linear INPUT (x ARRAY<FLOAT>) OUTPUT (y ARRAY<FLOAT>) WITH ("
                    + "'provider' = 'onnx', 'path' = '" + linear + "', 'resource' = 'gpu', 'batch-size' = '16',"
                    + " 'max-in-flight' = '2')");
            Map<Long, Row> results = collect(tEnv.executeSql(
                    "SELECT id, x, y FROM ML_PREDICT(TABLE features, MODEL linear, DESCRIPTOR(x))").collect());
            assertThat(results).hasSize(ROWS);
            for (int i = 0; i < ROWS; i++) {
                Row r = results.get((long) i);
                double[] expected = OnnxModels.linearInJava(floats(r.getField(1)), OnnxModelTest.W, OnnxModelTest.B);
                Float[] y = (Float[]) r.getField(2);
                for (int j = 0; j < expected.length; j++) {
                    assertThat((double) y[j]).as("row %d, y[%d]", i, j).isCloseTo(expected[j], within(1e-4));
                }
            }
            List<String> opened = log.lines("opened on CPU");
            assertThat(opened).hasSize(2);
            Set<String> devices = new HashSet<>();
            Pattern leased = Pattern.compile("\\(gpu: (\\S+) ");
            for (String line : opened) {
                Matcher m = leased.matcher(line);
                assertThat(m.find()).as(line).isTrue();
                devices.add(m.group(1));
            }
            assertThat(devices).as("each task its own GPU").hasSize(2);
            assertThat(log.lines("WARN ONNX model " + linear + " runs on the CPU: the leased GPU"))
                    .as("one WARN per task saying why it is not on its GPU").hasSize(2)
                    .allMatch(l -> l.contains("is a 'simulated' GPU"));
        }
    }

    @Test
    @DisplayName("Table API: Model.predict with a two-layer MLP whose four FLOAT outputs columns are packed")
    void tableApi() throws Exception {
        StreamTableEnvironment tEnv = tableEnv();
        tEnv.executeSql("CREATE MODEL mlp INPUT (x ARRAY<FLOAT>) OUTPUT (p FLOAT, q FLOAT) WITH ("
                + "'provider' = 'onnx', 'path' = '" + mlp + "', 'resource' = 'gpu', 'batch-size' = '32')");
        Table predicted = tEnv.fromModel("mlp").predict(tEnv.from("features"), ColumnList.of("x"));
        Map<Long, Row> results = new HashMap<>();
        try (CloseableIterator<Row> it = predicted.select($("id"), $("x"), $("p"), $("q")).execute().collect()) {
            it.forEachRemaining(r -> results.put((Long) r.getField(0), r));
        }
        assertThat(results).hasSize(ROWS);
        for (int i = 0; i < ROWS; i++) {
            Row r = results.get((long) i);
            double[] expected = OnnxModels.mlpInJava(floats(r.getField(1)), OnnxModelTest.W1, OnnxModelTest.B1, OnnxModelTest.W2,
                    OnnxModelTest.B2);
            assertThat((double) (Float) r.getField(2)).isCloseTo(expected[0], within(1e-4));
            assertThat((double) (Float) r.getField(3)).isCloseTo(expected[1], within(1e-4));
        }
    }

    @Test
    @DisplayName("the job authors' guide's SQL example runs as written, with a model at its path")
    void guideExample() throws Exception {
        String script = new String(getClass().getResourceAsStream("/guide-example.sql").readAllBytes(),
                java.nio.charset.StandardCharsets.UTF_8).replace("/models/scorer.onnx", linear.toString());
        List<String> statements = new ArrayList<>();
        for (String part : script.split(";")) {
            String sql = part.lines().filter(l -> !l.strip().startsWith("--")).collect(Collectors.joining("\n")).strip();
            if (!sql.isEmpty()) {
                statements.add(sql);
            }
        }
        assertThat(statements).hasSize(5);
        StreamExecutionEnvironment env = cluster.createEnvironment();
        env.setParallelism(2);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        // SET is the SQL client's statement; a TableEnvironment takes it as configuration
        for (String statement : statements.subList(0, 2)) {
            Matcher set = Pattern.compile("SET '([^']+)' = '([^']+)'").matcher(statement);
            assertThat(set.matches()).as(statement).isTrue();
            tEnv.getConfig().set(set.group(1), set.group(2));
        }
        for (String sql : statements.subList(2, 4)) {
            tEnv.executeSql(sql);
        }
        Map<Long, Row> results = collect(tEnv.executeSql(statements.get(4)).collect());
        assertThat(results).hasSize(1000);
        assertThat(results.keySet()).allMatch(id -> id >= 1 && id <= 1000);
        assertThat(results.values()).allMatch(r -> ((Float[]) r.getField(1)).length == 3);
    }

    @Test
    @DisplayName("a model file missing on the TaskManager fails the job at open with 'path' and the file, no hang")
    void missingFileAtOpen() {
        StreamTableEnvironment tEnv = tableEnv();
        Path missing = dir.resolve("not-there.onnx");
        tEnv.executeSql("CREATE MODEL gone INPUT (x ARRAY<FLOAT>) OUTPUT (y ARRAY<FLOAT>) WITH ("
                + "'provider' = 'onnx', 'path' = '" + missing + "', 'resource' = 'gpu')");
        assertThatThrownBy(() -> collect(tEnv.executeSql(
                "SELECT id, y FROM ML_PREDICT(TABLE features, MODEL gone, DESCRIPTOR(x))").collect()))
                .satisfies(e -> assertThat(ExceptionUtils.stringifyException(e))
                        .contains("'path' = " + missing + ": no such file"));
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    @DisplayName("Flink's timer a row off ('timeout' = '0' in ML_PREDICT): a batch past the model's 'timeout' fails the task")
    void modelTimeoutBoundsRowsWithoutFlinksTimer() throws Exception {
        // 1 MFLOP a row: a batch takes far longer than 1 ms
        Path slow = OnnxModels.write(dir, "slow.onnx", OnnxModels.mlp(filled(4, 65_536), new float[65_536],
                filled(65_536, 4), new float[4]));
        StreamTableEnvironment tEnv = tableEnv();
        tEnv.executeSql("CREATE MODEL slow INPUT (x ARRAY<FLOAT>) OUTPUT (y ARRAY<FLOAT>) WITH ('provider' = 'onnx',"
                + " 'path' = '" + slow + "', 'batch-size' = '256', 'timeout' = '1 ms')");
        tEnv.executeSql("CREATE TEMPORARY TABLE nowhere (id BIGINT, y ARRAY<FLOAT>) WITH ('connector' = 'blackhole')");
        String query = "SELECT id, y FROM ML_PREDICT(TABLE features, MODEL slow, DESCRIPTOR(x),"
                + " MAP['timeout', '0', 'max-concurrent-operations', '512'])";
        // what the planner hands Flink's async operator: no timeout, so no timer a row
        assertThat(tEnv.compilePlanSql("INSERT INTO nowhere " + query).asJsonString())
                .containsPattern("\"asyncOptions\" : \\{[^}]*\"timeout\" : 0,");
        assertThatThrownBy(() -> collect(tEnv.executeSql(query).collect()))
                .satisfies(e -> assertThat(ExceptionUtils.stringifyException(e))
                        .contains("rows ran longer than 'timeout' = 1 ms; it was cancelled"));
    }

    private static float[][] filled(int rows, int cols) {
        float[][] m = new float[rows][cols];
        for (float[] row : m) {
            java.util.Arrays.fill(row, 0.01f);
        }
        return m;
    }

    private static float[] floats(Object boxed) {
        Float[] b = (Float[]) boxed;
        float[] out = new float[b.length];
        for (int i = 0; i < b.length; i++) {
            out[i] = b[i];
        }
        return out;
    }

    private static Map<Long, Row> collect(CloseableIterator<Row> it) throws Exception {
        Map<Long, Row> out = new HashMap<>();
        try (it) {
            while (it.hasNext()) {
                Row r = it.next();
                Row previous = out.put((Long) r.getField(0), r);
                assertThat(previous).as("row %s came twice", r.getField(0)).isNull();
            }
        }
        return out;
    }
}
