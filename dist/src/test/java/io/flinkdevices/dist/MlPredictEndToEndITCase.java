package io.flinkdevices.dist;

import io.flinkdevices.dist.StandaloneCluster.ClientRun;
import io.flinkdevices.dist.StandaloneCluster.FlinkProcess;
import io.flinkdevices.dist.sqljob.SqlScriptJob;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.onnx.OnnxModels;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * ML_PREDICT as an operator runs it: the archive's {@code lib/} jar on the class path of Flink's
 * processes and of its clients (as Flink's scripts put {@code $FLINK_HOME/lib/*.jar} there), its
 * {@code plugins/nvidia/} giving a TaskManager two (fake) GPUs, and an SQL script submitted with
 * {@code flink run} of a job jar, or run by Flink's SQL client ({@code sql-client.sh -f}); every
 * result is checked against the model computed in Java.
 */
@DisplayName("ML_PREDICT through flink run and Flink's SQL client on a standalone cluster with the archive's lib/ jar")
class MlPredictEndToEndITCase {

    private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
    private static final int ROWS = 300;
    private static final float[][] W = {{1, 2, 3}, {-1, 0.5f, 0}, {0.25f, -2, 1}, {2, 1, -1}};
    private static final float[] B = {0.5f, -1, 2};
    private static final Pattern ROW = Pattern.compile("^ROW (\\d+)\\|([^|]+)\\|([^|]+)$", Pattern.MULTILINE);
    /** A row as the SQL client's tableau mode prints it: {@code | +I | 7 | x1 | x2 | x3 | x4 | y1 | y2 | y3 |}. */
    private static final Pattern TABLEAU_ROW = Pattern.compile("^\\|\\s*\\+I\\s*\\|\\s*(\\d+)\\s*\\|"
            + "((?:\\s*[-0-9.E]+\\s*\\|){3}\\s*[-0-9.E]+\\s*)\\|((?:\\s*[-0-9.E]+\\s*\\|){2}\\s*[-0-9.E]+\\s*)\\|$",
            Pattern.MULTILINE);
    private static final Pattern OPENED =
            Pattern.compile("ONNX model \\S+ opened on CPU \\(gpu: ([^(]+?) \\(");

    @TempDir Path temp;
    private FlinkProcess taskManager;

    @Test
    @DisplayName("an SQL script's ML_PREDICT rows through flink run equal x W + b, each of two tasks on a GPU of its own (CPU session)")
    void sqlScriptThroughFlinkRun() throws Exception {
        Path script = script("SET 'table.exec.async-ml-predict.max-concurrent-operations' = '64';",
                "SELECT id, features, scores FROM ML_PREDICT(TABLE events, MODEL scorer, DESCRIPTOR(features));");
        Path jobJar = Distribution.jarOfPackage(SqlScriptJob.class, temp.resolve("sql-job.jar"));
        try (StandaloneCluster cluster = startCluster()) {
            ClientRun run = cluster.flink(List.of("run", "-c", SqlScriptJob.class.getName(), jobJar.toString(),
                    script.toString()), Duration.ofMinutes(4));
            assertThat(run.exitCode).as("flink run: %s\n%s", run, cluster.diagnostics()).isZero();
            checkRows(ROW, run.output);
            checkTwoGpus(cluster);
        }
    }

    @Test
    @DisplayName("the guide's settings through Flink's SQL client (sql-client.sh -f): rows equal x W + b, two tasks on two GPUs")
    void sqlScriptThroughSqlClient() throws Exception {
        // the job authors' guide's settings; tableau mode prints every result row on the client's stdout
        Path script = script("SET 'table.exec.async-ml-predict.max-concurrent-operations' = '128';\n"
                        + "SET 'pipeline.object-reuse' = 'true';\n"
                        + "SET 'sql-client.execution.result-mode' = 'tableau';",
                // numbers, which tableau mode prints whole (it cuts arrays at 30 characters)
                "SELECT id, features[1], features[2], features[3], features[4], scores[1], scores[2], scores[3]\n"
                        + "  FROM ML_PREDICT(TABLE events, MODEL scorer, DESCRIPTOR(features), MAP['timeout', '0']);");
        try (StandaloneCluster cluster = startCluster()) {
            ClientRun run = cluster.sqlClient(Distribution.sqlClientJars(), script, Duration.ofMinutes(4));
            assertThat(run.exitCode).as("sql-client -f: %s\n%s", run, cluster.diagnostics()).isZero();
            // the client goes on after a failed statement and still exits 0
            assertThat(run.output).as("sql-client -f: %s\n%s", run, cluster.diagnostics()).doesNotContain("[ERROR]");
            checkRows(TABLEAU_ROW, run.output);
            checkTwoGpus(cluster);
        }
    }

    /** The events, the model and {@code select}, after {@code settings}. */
    private Path script(String settings, String select) throws Exception {
        Path model = OnnxModels.write(Files.createDirectories(temp.resolve("models")), "scorer.onnx",
                OnnxModels.linear(W, B));
        Path script = temp.resolve("predict.sql");
        Files.writeString(script, String.join("\n",
                "-- written by MlPredictEndToEndITCase",
                settings,
                "CREATE TEMPORARY TABLE events (id BIGINT, features ARRAY<FLOAT>) WITH (",
                "  'connector' = 'datagen', 'number-of-rows' = '" + ROWS + "',",
                "  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '" + ROWS + "',",
                "  'fields.features.length' = '4', 'fields.features.element.min' = '-1', 'fields.features.element.max' = '1');",
                "CREATE MODEL scorer INPUT (features ARRAY<FLOAT>) OUTPUT (scores ARRAY<FLOAT>)",
                "  WITH ('provider' = 'onnx', 'path' = '" + model + "', 'resource' = 'gpu',",
                "        'batch-size' = '32', 'max-in-flight' = '2');",
                select,
                ""));
        return script;
    }

    private StandaloneCluster startCluster() throws Exception {
        Path lib = Distribution.unpacked().resolve("lib/flink-devices-model-onnx-" + Distribution.version() + ".jar");
        assertThat(lib).as("the archive's lib/ jar").isRegularFile();
        FakeHost host = FakeHost.create(temp.resolve("host"));
        Path smi = FakeNvidiaHost.installH100s(host, 2);
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("taskmanager.numberOfTaskSlots", "2");
        settings.put("parallelism.default", "2");
        settings.put("external-resources", "gpu");
        settings.put("external-resource.gpu.amount", "2");
        settings.put("external-resource.gpu.driver-factory.class", "io.flinkdevices.nvidia.NvidiaGpuDriverFactory");
        settings.put("external-resource.gpu.param.nvidia-smi.path", smi.toString());
        List<Path> classPath = new ArrayList<>(Distribution.flinkClassPath());
        classPath.add(lib);
        StandaloneCluster cluster = new StandaloneCluster(temp.resolve("flink"), Distribution.unpacked().resolve("plugins"),
                classPath, settings);
        try {
            cluster.startJobManager(START_TIMEOUT);
            taskManager = cluster.startTaskManager("taskmanager-1");
            cluster.awaitTaskManagers(1, START_TIMEOUT);
            return cluster;
        } catch (Exception | AssertionError e) {
            cluster.close();
            throw e;
        }
    }

    /** Every id once, with the model's scores of its features. */
    private static void checkRows(Pattern row, String output) {
        Matcher m = row.matcher(output);
        Map<Long, Integer> seen = new LinkedHashMap<>();
        while (m.find()) {
            long id = Long.parseLong(m.group(1));
            seen.merge(id, 1, Integer::sum);
            float[] x = floats(m.group(2));
            float[] y = floats(m.group(3));
            double[] expected = OnnxModels.linearInJava(x, W, B);
            assertThat(y).as("scores of row %d", id).hasSize(3);
            for (int j = 0; j < 3; j++) {
                assertThat((double) y[j]).as("score %d of row %d", j, id).isCloseTo(expected[j], within(1e-4));
            }
        }
        assertThat(seen.keySet()).as("ids of the printed rows\n%s", output)
                .containsExactlyInAnyOrderElementsOf(new TreeSet<>(ids()));
        assertThat(seen.values()).as("every row once").containsOnly(1);
    }

    /** The two tasks leased two GPUs, and said why their sessions run on the CPU. */
    private void checkTwoGpus(StandaloneCluster cluster) throws Exception {
        String log = Files.readString(taskManager.log);
        Matcher opened = OPENED.matcher(log);
        List<String> gpus = new ArrayList<>();
        while (opened.find()) {
            gpus.add(opened.group(1));
        }
        assertThat(gpus).as("the GPUs the two tasks leased, in the TaskManager's log\n%s", cluster.diagnostics())
                .hasSize(2).doesNotHaveDuplicates();
        assertThat(log).as("why the sessions run on the CPU")
                .contains("this ONNX Runtime build has no CUDA execution provider");
    }

    private static List<Long> ids() {
        List<Long> ids = new ArrayList<>();
        for (long i = 1; i <= ROWS; i++) {
            ids.add(i);
        }
        return ids;
    }

    private static float[] floats(String csv) {
        List<Float> values = java.util.Arrays.stream(csv.split("[,|]")).map(v -> Float.parseFloat(v.trim()))
                .collect(Collectors.toList());
        float[] out = new float[values.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = values.get(i);
        }
        return out;
    }
}
