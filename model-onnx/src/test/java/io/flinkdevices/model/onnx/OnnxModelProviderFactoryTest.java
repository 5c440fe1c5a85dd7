package io.flinkdevices.model.onnx;

import io.flinkdevices.testkit.onnx.OnnxModels;

import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What the planner says about a CREATE MODEL with 'provider' = 'onnx' before any task runs. */
class OnnxModelProviderFactoryTest {

    @TempDir
    static Path dir;

    private static Path linear;
    private TableEnvironment tEnv;

    @BeforeAll
    static void models() throws Exception {
        linear = OnnxModels.write(dir, "linear.onnx", OnnxModels.linear(OnnxModelTest.W, OnnxModelTest.B));
    }

    @BeforeEach
    void env() {
        tEnv = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        tEnv.executeSql("CREATE TEMPORARY TABLE t (id BIGINT, x ARRAY<FLOAT>, s STRING) WITH ('connector' = 'datagen')");
    }

    private int models;

    private String plan(String modelColumns, String options) {
        String name = "m" + (++models);
        tEnv.executeSql("CREATE TEMPORARY MODEL " + name + " " + modelColumns + " WITH ('provider' = 'onnx', " + options + ")");
        return tEnv.explainSql("SELECT * FROM ML_PREDICT(TABLE t, MODEL " + name + ", DESCRIPTOR(x))");
    }

    private static String message(Throwable t) {
        return ExceptionUtils.stringifyException(t);
    }

    @Test
    @DisplayName("Flink finds the provider by 'provider' = 'onnx' and plans an asynchronous ML_PREDICT")
    void plans() {
        String plan = plan("INPUT (x ARRAY<FLOAT>) OUTPUT (y ARRAY<FLOAT>)", "'path' = '" + linear + "'");
        assertThat(plan).contains("MLPredictTableFunction(invocation=[ML_PREDICT(TABLE(#0), Model(MODEL default_catalog.default_database.m1)");
    }

    @Test
    @DisplayName("options out of range are one message naming each option and its range")
    void ranges() {
        assertThatThrownBy(() -> plan("INPUT (x ARRAY<FLOAT>) OUTPUT (y ARRAY<FLOAT>)", "'path' = '" + linear
                + "', 'batch-size' = '0', 'max-in-flight' = '65', 'cpu-threads' = '0', 'timeout' = '0 ms',"
                + " 'batch-wait' = '11 s'"))
                .satisfies(e -> assertThat(message(e))
                        .contains("model default_catalog.default_database.m1 ('provider' = 'onnx'): 'batch-size' must be"
                                + " from 1 to 65536 rows but is 0; 'max-in-flight' must be from 1 to 64 batches but is 65;"
                                + " 'cpu-threads' must be from 1 to 256 threads but is 0;"
                                + " 'timeout' must be from 1 ms to 1 h but is 0 ms; 'batch-wait' must be from 0 ms to 10 s"
                                + " but is 11000 ms"));
        assertThatThrownBy(() -> plan("INPUT (x ARRAY<FLOAT>) OUTPUT (y ARRAY<FLOAT>)", "'path' = '" + linear
                + "', 'share' = '0.5'"))
                .satisfies(e -> assertThat(message(e)).contains("'share' is set but 'resource' is not"));
        assertThatThrownBy(() -> plan("INPUT (x ARRAY<FLOAT>) OUTPUT (y ARRAY<FLOAT>)", "'path' = '" + linear
                + "', 'cpu-threads' = '257'"))
                .satisfies(e -> assertThat(message(e)).contains("'cpu-threads' must be from 1 to 256 threads but is 257"));
    }

    @Test
    @DisplayName("an unknown option and a missing 'path' are named by Flink's option check")
    void unknownAndMissing() {
        assertThatThrownBy(() -> plan("INPUT (x ARRAY<FLOAT>) OUTPUT (y ARRAY<FLOAT>)", "'path' = '" + linear
                + "', 'batchsize' = '8'"))
                .satisfies(e -> assertThat(message(e)).contains("Unsupported options").contains("batchsize")
                        .contains("batch-size"));
        assertThatThrownBy(() -> plan("INPUT (x ARRAY<FLOAT>) OUTPUT (y ARRAY<FLOAT>)", "'resource' = 'gpu'"))
                .satisfies(e -> assertThat(message(e)).contains("Missing required options are:").contains("path"));
    }

    @Test
    @DisplayName("INPUT that does not match a model file the planner can read fails at planning, naming column and input")
    void mismatchAtPlanning() {
        assertThatThrownBy(() -> plan("INPUT (x ARRAY<FLOAT>) OUTPUT (y ARRAY<FLOAT>, z FLOAT)", "'path' = '" + linear + "'"))
                .satisfies(e -> assertThat(message(e)).contains("OUTPUT declares 2 columns ('y' ARRAY<FLOAT>, 'z' FLOAT)"
                        + " but the model has 1 outputs (y: float[batch, 3]; model file " + linear + ")"));
        assertThatThrownBy(() -> plan("INPUT (x ARRAY<FLOAT>) OUTPUT (y ARRAY<FLOAT>)", "'path' = '" + dir + "'"))
                .satisfies(e -> assertThat(message(e)).contains("'path' = " + dir + ": not a regular file"));
    }

    @Test
    @DisplayName("a model file the planner cannot see is not an error at planning: it need only exist on the TaskManagers")
    void fileOnlyOnTaskManagers() {
        assertThat(plan("INPUT (x ARRAY<FLOAT>) OUTPUT (y ARRAY<FLOAT>)", "'path' = '/models/on-the-task-managers.onnx'"))
                .contains("MLPredictTableFunction");
    }
}
