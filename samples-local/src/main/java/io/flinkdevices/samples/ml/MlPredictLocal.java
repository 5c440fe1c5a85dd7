package io.flinkdevices.samples.ml;

import io.flinkdevices.samples.LocalFiles;
import io.flinkdevices.samples.gpu.NvidiaPlugin;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.onnx.OnnxModels;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The main job's ML_PREDICT part: SQL's {@code ML_PREDICT} with {@code 'provider' = 'onnx'} over a
 * linear layer (4 features to 3 scores) that this code writes as an ONNX file, on a TaskManager
 * whose NVIDIA driver hands out two simulated H100s, one task per GPU; every row's scores are
 * checked against {@code x W + b} computed in Java.
 */
public final class MlPredictLocal {

    static final int ROWS = 1000;
    static final float[][] W = {{0.5f, -1, 2}, {1, 0.25f, -0.5f}, {-2, 1, 0}, {0, 0.75f, 1}};
    static final float[] B = {0.1f, -0.2f, 0.3f};

    private MlPredictLocal() {}

    /** What the part saw: rows back, rows whose scores were right, and rows seen more than once. */
    public static final class Outcome {
        public final int rows;
        public final int right;
        public final int duplicates;

        Outcome(int rows, int right, int duplicates) {
            this.rows = rows;
            this.right = right;
            this.duplicates = duplicates;
        }

        public boolean ok() {
            return rows == ROWS && right == ROWS && duplicates == 0;
        }

        /** The part's one line. */
        public String summary() {
            return "ML_PREDICT ('provider' = 'onnx', a linear layer 4 -> 3 written as an ONNX file), 2 tasks on a"
                    + " TaskManager with 2 simulated H100s, ONNX Runtime on the CPU (its default build has no CUDA): "
                    + rows + " of " + ROWS + " rows back, " + right + " with scores equal to x W + b computed in Java"
                    + (duplicates > 0 ? ", " + duplicates + " twice" : "") + ".";
        }
    }

    /** Runs the part and prints its line; true when every row came back once with the right scores. */
    public static boolean run(PrintStream out) throws Exception {
        Outcome outcome = predict();
        out.println();
        out.println(outcome.summary());
        return outcome.ok();
    }

    /** Starts the cluster, runs the query to its end and checks every row. */
    public static Outcome predict() throws Exception {
        Path work = Files.createTempDirectory("flink-devices-ml-predict");
        try {
            Path plugins = work.resolve("plugins");
            NvidiaPlugin.install(plugins);
            Path smi = FakeNvidiaHost.installH100s(FakeHost.create(work.resolve("host")), 2);
            Path model = OnnxModels.write(work, "scorer.onnx", OnnxModels.linear(W, B));
            try (LocalDeviceCluster cluster = LocalDeviceCluster.builder()
                    .pluginsDir(plugins)
                    .taskManagers(1)
                    .slotsPerTaskManager(2)
                    .resource("gpu", NvidiaPlugin.FACTORY, 2,
                            Map.of("backend", "nvidia-smi", "nvidia-smi.path", smi.toString()))
                    .build()
                    .start()) {
                StreamExecutionEnvironment env = cluster.createEnvironment();
                env.setParallelism(2);
                StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
                tEnv.getConfig().set("table.exec.async-ml-predict.max-concurrent-operations", "64");
                tEnv.executeSql("CREATE TEMPORARY TABLE events (id BIGINT, features ARRAY<FLOAT>) WITH ("
                        + "'connector' = 'datagen', 'number-of-rows' = '" + ROWS + "', 'fields.id.kind' = 'sequence',"
                        + " 'fields.id.start' = '1', 'fields.id.end' = '" + ROWS + "', 'fields.features.length' = '4',"
                        + " 'fields.features.element.min' = '-1', 'fields.features.element.max' = '1')");
                tEnv.executeSql("CREATE MODEL scorer INPUT (features ARRAY<FLOAT>) OUTPUT (scores ARRAY<FLOAT>) WITH ("
                        + "'provider' = 'onnx', 'path' = '" + model + "', 'resource' = 'gpu', 'batch-size' = '32',"
                        + " 'max-in-flight' = '2')");
                Map<Long, Integer> seen = new HashMap<>();
                int right = 0;
                // read to the end: the bounded job finishes by itself before the cluster closes
                try (CloseableIterator<Row> rows = tEnv.executeSql(
                        "SELECT id, features, scores FROM ML_PREDICT(TABLE events, MODEL scorer, DESCRIPTOR(features))")
                        .collect()) {
                    while (rows.hasNext()) {
                        Row r = rows.next();
                        seen.merge((Long) r.getField(0), 1, Integer::sum);
                        if (matches((Float[]) r.getField(1), (Float[]) r.getField(2))) {
                            right++;
                        }
                    }
                }
                int duplicates = (int) seen.values().stream().filter(n -> n > 1).count();
                return new Outcome(seen.size(), right, duplicates);
            }
        } finally {
            LocalFiles.deleteRecursively(work);
        }
    }

    private static boolean matches(Float[] features, Float[] scores) {
        if (features == null || scores == null || features.length != 4 || scores.length != 3) {
            return false;
        }
        float[] x = new float[4];
        for (int i = 0; i < 4; i++) {
            x[i] = features[i];
        }
        double[] expected = OnnxModels.linearInJava(x, W, B);
        for (int j = 0; j < 3; j++) {
            if (Math.abs(scores[j] - expected[j]) > 1e-4) {
                return false;
            }
        }
        return true;
    }
}
