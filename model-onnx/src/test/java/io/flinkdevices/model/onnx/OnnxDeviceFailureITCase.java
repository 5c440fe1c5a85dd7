package io.flinkdevices.model.onnx;

import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;
import io.flinkdevices.testkit.onnx.OnnxModels;

import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A device that fails while ML_PREDICT runs on it fails the task through the lease's guard, which
 * every batch checks: the RDMA plugin over a fake sysfs ({@code fail-tasks}, monitor at 200 ms)
 * gives the task a device whose port the test takes DOWN mid-job.
 */
class OnnxDeviceFailureITCase {

    @TempDir
    Path temp;

    private Path installRdma(FakeFileTree sys) throws Exception {
        String p = System.getProperty("rdma.plugin.jar");
        assertThat(p).as("system property rdma.plugin.jar (set by the build)").isNotNull();
        Path jar = Path.of(p);
        Path folder = Files.createDirectories(temp.resolve("plugins/rdma"));
        Files.copy(jar, folder.resolve(jar.getFileName()));
        return temp.resolve("plugins");
    }

    private static String awaitOpened(CapturedLog log) throws InterruptedException {
        Pattern opened = Pattern.compile("opened on CPU \\(rdma: (mlx5_\\d)/1 ");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
            for (String line : log.lines("opened on CPU (rdma: ")) {
                Matcher m = opened.matcher(line);
                if (m.find()) {
                    return m.group(1);
                }
            }
            assertThat(System.nanoTime()).as("the model opened within 120 s").isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    @Test
    @DisplayName("after its device fails, the restarted task leases the other device, and every row comes out once and right")
    void restartOnAnotherDeviceLosesAndDuplicatesNothing() throws Exception {
        int rows = 4000;
        Path model = OnnxModels.write(temp, "linear.onnx", OnnxModels.linear(OnnxModelTest.W, OnnxModelTest.B));
        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).infiniband("mlx5_1", 200, true)
                .installOn(FakeHost.create(temp.resolve("host")));
        Map<String, String> params = Map.of("sysfs.root", sys.root().toString(), "monitor.interval", "200 ms",
                "health.action", "fail-tasks");
        try (CapturedLog log = new CapturedLog();
                LocalDeviceCluster cluster = LocalDeviceCluster.builder()
                        .pluginsDir(installRdma(sys))
                        .resource("rdma", "io.flinkdevices.rdma.RdmaDriverFactory", 2, params)
                        .set("restart-strategy.type", "fixed-delay")
                        .set("restart-strategy.fixed-delay.attempts", "5")
                        .set("restart-strategy.fixed-delay.delay", "500 ms")
                        .set("taskmanager.memory.network.min", "64m")
                        .set("taskmanager.memory.network.max", "64m")
                        .build()
                        .start()) {
            StreamExecutionEnvironment env = cluster.createEnvironment();
            env.setParallelism(1);
            env.enableCheckpointing(200);
            StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
            tEnv.executeSql("CREATE TEMPORARY TABLE features (id BIGINT, x ARRAY<FLOAT>) WITH ('connector' = 'datagen',"
                    + " 'rows-per-second' = '500', 'number-of-rows' = '" + rows + "', 'fields.id.kind' = 'sequence',"
                    + " 'fields.id.start' = '1', 'fields.id.end' = '" + rows + "', 'fields.x.length' = '4',"
                    + " 'fields.x.element.min' = '-2', 'fields.x.element.max' = '2')");
            tEnv.executeSql("CREATE MODEL linear INPUT (x ARRAY<FLOAT>) OUTPUT (y ARRAY<FLOAT>) WITH ('provider' = 'onnx',"
                    + " 'path' = '" + model + "', 'resource' = 'rdma')");
            Map<Long, Integer> seen = new HashMap<>();
            List<String> wrong = new ArrayList<>();
            try (CloseableIterator<Row> it = tEnv.executeSql(
                    "SELECT id, x, y FROM ML_PREDICT(TABLE features, MODEL linear, DESCRIPTOR(x))").collect()) {
                String first = awaitOpened(log);
                int got = 0;
                while (it.hasNext()) {
                    Row r = it.next();
                    seen.merge((Long) r.getField(0), 1, Integer::sum);
                    float[] x = floats((Float[]) r.getField(1));
                    Float[] y = (Float[]) r.getField(2);
                    double[] expected = OnnxModels.linearInJava(x, OnnxModelTest.W, OnnxModelTest.B);
                    for (int j = 0; j < expected.length; j++) {
                        if (Math.abs(y[j] - expected[j]) > 1e-4) {
                            wrong.add(r.toString());
                        }
                    }
                    if (++got == 200) {
                        FakeRdmaHost.portDown(sys, first, 1);
                    }
                }
                assertThat(log.lines("opened on CPU (rdma: " + (first.equals("mlx5_0") ? "mlx5_1" : "mlx5_0") + "/1"))
                        .as("the restarted task leased the other device").isNotEmpty();
            }
            assertThat(wrong).isEmpty();
            assertThat(seen).hasSize(rows);
            assertThat(seen.values()).as("each row exactly once").allMatch(n -> n == 1);
        }
    }

    private static float[] floats(Float[] b) {
        float[] out = new float[b.length];
        for (int i = 0; i < b.length; i++) {
            out[i] = b[i];
        }
        return out;
    }

    @Test
    @DisplayName("a leased device that fails mid-job fails the ML_PREDICT task naming the device and the reason")
    void failedDeviceFailsTheTask() throws Exception {
        Path model = OnnxModels.write(temp, "linear.onnx", OnnxModels.linear(OnnxModelTest.W, OnnxModelTest.B));
        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).installOn(FakeHost.create(temp.resolve("host")));
        Map<String, String> params = Map.of("sysfs.root", sys.root().toString(), "monitor.interval", "200 ms",
                "health.action", "fail-tasks");
        try (CapturedLog log = new CapturedLog();
                LocalDeviceCluster cluster = LocalDeviceCluster.builder()
                        .pluginsDir(installRdma(sys))
                        .resource("rdma", "io.flinkdevices.rdma.RdmaDriverFactory", 1, params)
                        .set("restart-strategy.type", "none")
                        .set("taskmanager.memory.network.min", "64m")
                        .set("taskmanager.memory.network.max", "64m")
                        .build()
                        .start()) {
            StreamExecutionEnvironment env = cluster.createEnvironment();
            env.setParallelism(1);
            StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
            tEnv.executeSql("CREATE TEMPORARY TABLE features (x ARRAY<FLOAT>) WITH ('connector' = 'datagen',"
                    + " 'rows-per-second' = '2000', 'fields.x.length' = '4')");
            tEnv.executeSql("CREATE TEMPORARY TABLE sink (x ARRAY<FLOAT>, y ARRAY<FLOAT>) WITH ('connector' = 'blackhole')");
            tEnv.executeSql("CREATE MODEL linear INPUT (x ARRAY<FLOAT>) OUTPUT (y ARRAY<FLOAT>) WITH ('provider' = 'onnx',"
                    + " 'path' = '" + model + "', 'resource' = 'rdma')");
            TableResult result = tEnv.executeSql(
                    "INSERT INTO sink SELECT x, y FROM ML_PREDICT(TABLE features, MODEL linear, DESCRIPTOR(x))");
            JobClient job = result.getJobClient().orElseThrow();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (log.lines("opened on CPU (rdma: mlx5_0/1").isEmpty()) {
                assertThat(System.nanoTime()).as("the model opened within 120 s").isLessThan(deadline);
                Thread.sleep(50);
            }
            assertThat(log.lines("WARN ONNX model " + model + " runs on the CPU: the leased device mlx5_0/1 of 'rdma' is not a GPU"))
                    .hasSize(1);
            Thread.sleep(500);

            FakeRdmaHost.portDown(sys, "mlx5_0", 1);
            assertThatThrownBy(() -> job.getJobExecutionResult().get(120, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .satisfies(e -> assertThat(ExceptionUtils.stringifyException(e))
                            .contains("DeviceFailedException")
                            .contains("Device mlx5_0/1 of external resource 'rdma' failed: port mlx5_0/1 state DOWN"));
        }
    }
}
