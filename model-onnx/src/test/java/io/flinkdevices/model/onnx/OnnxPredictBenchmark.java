package io.flinkdevices.model.onnx;

import io.flinkdevices.testkit.onnx.OnnxModels;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.FloatType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.Row;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Rows per second of ML_PREDICT against ONNX Runtime's own loop on the same model and batch size,
 * in one JVM, interleaved: a bare loop of {@code session.run} over batches of random rows, and an
 * SQL job (features from a chained FLIP-27 source of pooled random rows, or with {@code
 * -Dsource=datagen} from the SQL datagen connector; ML_PREDICT; the first value of each result to a
 * counting map and a discarding sink; parallelism 1, local MiniCluster, CPU). The job's rate is
 * taken between its N/4-th and its N-th result, so that start-up and planning do not count; each
 * side also reports the JVM's CPU time a row. {@code -Djobs=...} runs one or more job settings in
 * each round, after the same round's bare loops (see {@link JobSettings}). Not a test: run it by
 * hand (see docs/measured-figures.md).
 *
 * <p>Arguments: {@code [rows] [batch-size] [max-in-flight] [rounds] [hidden,...]}, default 200000 64
 * 2 3 4096: the model is an MLP 16 -> hidden (Relu) -> 16, one after the other for each hidden
 * size; a run has {@code rows x 4096 / hidden} rows (at least rows/4, at most rows x 5).
 */
public final class OnnxPredictBenchmark {

    private static final int IN = 16;
    private static final int OUT = 16;

    private OnnxPredictBenchmark() {}

    public static void main(String[] args) throws Exception {
        int rows = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int batch = args.length > 1 ? Integer.parseInt(args[1]) : 64;
        int inFlight = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 3;
        String hiddens = args.length > 4 ? args[4] : "4096";
        boolean datagen = "datagen".equals(System.getProperty("source", "pool"));
        List<JobSettings> jobs = JobSettings.parseAll(System.getProperty("jobs", "defaults"));
        System.out.println("source: " + (datagen ? "SQL datagen connector" : "pooled rows (FLIP-27 source, chained)")
                + "; batch-size " + batch + ", max-in-flight " + inFlight + ", " + rounds + " rounds, "
                + Runtime.getRuntime().availableProcessors() + " cores");
        for (JobSettings job : jobs) {
            System.out.println("job settings " + job.name + ": " + job.describe());
        }
        for (String h : hiddens.split(",")) {
            int hidden = Integer.parseInt(h.trim());
            // about the same time per model: fewer rows for a heavier one, more for a lighter one
            int n = (int) Math.max(rows / 4, Math.min((long) rows * 5, (long) rows * 4096 / hidden));
            measure(hidden, n, batch, inFlight, rounds, datagen, jobs);
        }
    }

    private static void measure(int hidden, int rows, int batch, int inFlight, int rounds, boolean datagen,
            List<JobSettings> jobs) throws Exception {
        Path dir = Files.createTempDirectory("onnx-bench");
        Random random = new Random(1);
        Path model = OnnxModels.write(dir, "mlp.onnx", OnnxModels.mlp(matrix(random, IN, hidden), vector(random, hidden),
                matrix(random, hidden, OUT), vector(random, OUT)));
        System.out.printf("%nmodel: MLP %d -> %d (Relu) -> %d, %.3f MFLOP per row, %d rows a run%n", IN, hidden, OUT,
                2.0 * (IN * hidden + hidden * OUT) / 1e6, rows);
        List<Double> bare = new ArrayList<>();
        List<Double> quiet = new ArrayList<>();
        List<Double> quietCpu = new ArrayList<>();
        List<List<Double>> sql = new ArrayList<>();
        List<List<Double>> sqlCpu = new ArrayList<>();
        List<List<Double>> ratios = new ArrayList<>();
        for (int j = 0; j < jobs.size(); j++) {
            sql.add(new ArrayList<>());
            sqlCpu.add(new ArrayList<>());
            ratios.add(new ArrayList<>());
        }
        bareLoop(model, batch, rows / 10, true);
        for (int r = 0; r < rounds; r++) {
            double b = bareLoop(model, batch, rows, true)[0];
            double[] q = bareLoop(model, batch, rows, false);
            bare.add(b);
            quiet.add(q[0]);
            quietCpu.add(q[1]);
            StringBuilder line = new StringBuilder(String.format("round %d (load average %s): bare loop %.0f rows/s"
                    + " (spinning off: %.0f, %.1f CPU us a row)", r + 1, loadAverage(), b, q[0], q[1]));
            double[][] results = new double[jobs.size()][];
            for (int k = 0; k < jobs.size(); k++) {
                // each round starts with another job, so that none always runs first or last after the loops
                int j = (k + r) % jobs.size();
                results[j] = mlPredict(model, batch, inFlight, rows, datagen, jobs.get(j));
            }
            for (int j = 0; j < jobs.size(); j++) {
                double[] s = results[j];
                double ratio = s[0] / Math.max(b, q[0]);
                sql.get(j).add(s[0]);
                sqlCpu.get(j).add(s[1]);
                ratios.get(j).add(ratio);
                line.append(String.format(", ML_PREDICT (%s) %.0f rows/s (%.1f CPU us a row), ratio %.2f",
                        jobs.get(j).name, s[0], s[1], ratio));
            }
            System.out.println(line);
        }
        System.out.printf("median: bare loop %.0f rows/s (spinning off: %.0f, %.1f CPU us a row)%n", median(bare),
                median(quiet), median(quietCpu));
        for (int j = 0; j < jobs.size(); j++) {
            double ratio = median(ratios.get(j));
            System.out.printf("median: ML_PREDICT (%s) %.0f rows/s (%.1f CPU us a row); median of the rounds' ratios to"
                    + " the better loop %.2f (rounds %.2f to %.2f): goal 0.8 %s%n", jobs.get(j).name,
                    median(sql.get(j)), median(sqlCpu.get(j)), ratio, Collections.min(ratios.get(j)),
                    Collections.max(ratios.get(j)), ratio >= 0.8 ? "met" : "not met");
        }
    }

    /** The 1-minute load average, or "unknown" off Linux. */
    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (Exception e) {
            return "unknown";
        }
    }

    /** CPU time of this JVM, all threads, in nanoseconds. */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /**
     * ONNX Runtime's own loop: one session, batches of {@code batch} rows, a new input tensor per
     * batch; with ONNX Runtime's default options ({@code spinning}), or with its CPU threads' spinning
     * off, as ML_PREDICT's CPU session has it.
     */
    static double[] bareLoop(Path model, int batch, int rows, boolean spinning) throws Exception {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        Random random = new Random(2);
        float[] data = new float[batch * IN];
        for (int i = 0; i < data.length; i++) {
            data[i] = random.nextFloat() * 2 - 1;
        }
        try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
            if (!spinning) {
                options.addConfigEntry("session.intra_op.allow_spinning", "0");
            }
            return bareLoop(env, env.createSession(model.toString(), options), data, batch, rows);
        }
    }

    private static double[] bareLoop(OrtEnvironment env, OrtSession session, float[] data, int batch, int rows)
            throws Exception {
        try (session) {
            long cpu = processCpuNanos();
            long start = System.nanoTime();
            long sink = 0;
            for (int done = 0; done < rows; done += batch) {
                FloatBuffer buf = ByteBuffer.allocateDirect(data.length * 4).order(ByteOrder.nativeOrder()).asFloatBuffer();
                buf.put(data).flip();
                try (OnnxTensor x = OnnxTensor.createTensor(env, buf, new long[] {batch, IN});
                        OrtSession.Result result = session.run(Map.of("x", x))) {
                    float[] y = new float[batch * OUT];
                    ((OnnxTensor) result.get(0)).getFloatBuffer().get(y);
                    sink += Float.floatToIntBits(y[0]);
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            double cpuMicros = (processCpuNanos() - cpu) / 1e3 / rows;
            if (sink == 42) {
                System.out.print("");
            }
            return new double[] {rows / seconds, cpuMicros};
        }
    }

    /**
     * ML_PREDICT's rate between its rows/4-th and its last result, as a map after it counts them,
     * and the JVM's CPU time a row in between. The features come from the SQL datagen connector
     * ({@code datagen}: a legacy source in a thread of its own, which draws 16 boxed random floats a
     * row and sends each row to the next task through Flink's network stack, because Flink's async
     * operator does not chain to a legacy source) or from a FLIP-27 source, as Kafka's is, that
     * hands out rows of a pool of random ones (the bare loop too reuses its random batch) and
     * chains to ML_PREDICT.
     */
    static double[] mlPredict(Path model, int batch, int inFlight, int rows, boolean datagen, JobSettings job)
            throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        if (job.objectReuse) {
            env.getConfig().enableObjectReuse();
        }
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        int modelInFlight = job.maxInFlight > 0 ? job.maxInFlight : inFlight;
        tEnv.getConfig().set("table.exec.async-ml-predict.max-concurrent-operations",
                String.valueOf(job.capacity > 0 ? job.capacity : batch * modelInFlight));
        if (job.timeout != null) {
            // 0 turns off the async operator's timer per row; the provider's 'timeout' still bounds every batch
            tEnv.getConfig().set("table.exec.async-ml-predict.timeout", job.timeout);
        }
        if (job.outputMode != null) {
            tEnv.getConfig().set("table.exec.async-ml-predict.output-mode", job.outputMode);
        }
        if (datagen) {
            tEnv.executeSql("CREATE TEMPORARY TABLE features (x ARRAY<FLOAT>) WITH ('connector' = 'datagen',"
                    + " 'number-of-rows' = '" + rows + "', 'rows-per-second' = '1000000000', 'fields.x.length' = '" + IN
                    + "', 'fields.x.element.min' = '-1', 'fields.x.element.max' = '1')");
        } else {
            RowType type = RowType.of(new LogicalType[] {new ArrayType(new FloatType())}, new String[] {"x"});
            DataStream<RowData> features = env.fromSource(new DataGeneratorSource<>(new PooledRows(), rows,
                    InternalTypeInfo.of(type)), WatermarkStrategy.noWatermarks(), "features");
            tEnv.createTemporaryView("features", features);
        }
        tEnv.executeSql("CREATE TEMPORARY MODEL mlp INPUT (x ARRAY<FLOAT>) OUTPUT (y ARRAY<FLOAT>) WITH ('provider' = 'onnx',"
                + " 'path' = '" + model + "', 'batch-size' = '" + batch + "', 'max-in-flight' = '" + modelInFlight
                + "')");
        // one value of each result leaves SQL, so that converting rows costs the harness little
        Table predicted = tEnv.sqlQuery("SELECT y[1] AS y1 FROM ML_PREDICT(TABLE features, MODEL mlp, DESCRIPTOR(x))");
        Clock.reset(rows);
        DataStream<Row> results = tEnv.toDataStream(predicted);
        results.map(new Clock()).returns(results.getType()).sinkTo(new DiscardingSink<>());
        env.execute("ML_PREDICT benchmark");
        int counted = rows - rows / 4;
        return new double[] {counted / ((Clock.last - Clock.quarter) / 1e9), (Clock.lastCpu - Clock.quarterCpu) / 1e3 / counted};
    }

    /**
     * One job configuration, from {@code -Djobs=name:key=value,...;name:...}: keys {@code timeout}
     * (table.exec.async-ml-predict.timeout), {@code output-mode}, {@code object-reuse} (true/false),
     * {@code max-in-flight} (the model option) and {@code max-concurrent-operations}; the default
     * capacity is batch size x max-in-flight.
     */
    static final class JobSettings {
        final String name;
        final String timeout;
        final String outputMode;
        final boolean objectReuse;
        final int maxInFlight;
        final int capacity;

        private JobSettings(String name, Map<String, String> settings) {
            this.name = name;
            Map<String, String> left = new java.util.HashMap<>(settings);
            this.timeout = left.remove("timeout");
            this.outputMode = left.remove("output-mode");
            this.objectReuse = Boolean.parseBoolean(left.remove("object-reuse"));
            this.maxInFlight = Integer.parseInt(left.getOrDefault("max-in-flight", "0"));
            left.remove("max-in-flight");
            this.capacity = Integer.parseInt(left.getOrDefault("max-concurrent-operations", "0"));
            left.remove("max-concurrent-operations");
            if (!left.isEmpty()) {
                throw new IllegalArgumentException("-Djobs: unknown settings " + left.keySet() + " of job '" + name
                        + "'; expected timeout, output-mode, object-reuse, max-in-flight, max-concurrent-operations");
            }
        }

        static List<JobSettings> parseAll(String spec) {
            List<JobSettings> out = new ArrayList<>();
            for (String job : spec.split(";")) {
                String[] nameAndSettings = job.trim().split(":", 2);
                Map<String, String> settings = new java.util.LinkedHashMap<>();
                if (nameAndSettings.length > 1 && !nameAndSettings[1].isBlank()) {
                    for (String kv : nameAndSettings[1].split(",")) {
                        String[] p = kv.split("=", 2);
                        if (p.length != 2) {
                            throw new IllegalArgumentException("-Djobs: '" + kv + "' of job '" + nameAndSettings[0]
                                    + "' is not key=value");
                        }
                        settings.put(p[0].trim(), p[1].trim());
                    }
                }
                out.add(new JobSettings(nameAndSettings[0].trim(), settings));
            }
            return out;
        }

        String describe() {
            return "table.exec.async-ml-predict.timeout " + (timeout == null ? "Flink's default (3 min)" : timeout)
                    + ", output-mode " + (outputMode == null ? "Flink's default (ORDERED)" : outputMode)
                    + ", pipeline.object-reuse " + objectReuse
                    + (maxInFlight > 0 ? ", model 'max-in-flight' " + maxInFlight : "")
                    + ", max-concurrent-operations "
                    + (capacity > 0 ? String.valueOf(capacity) : "batch-size x max-in-flight");
        }
    }

    /** Rows of {@code IN} random floats in [-1, 1), from a pool of 1024 drawn once. */
    static final class PooledRows implements GeneratorFunction<Long, RowData> {
        private static final long serialVersionUID = 1L;
        private transient float[][] pool;

        @Override
        public void open(SourceReaderContext context) {
            Random random = new Random(3);
            pool = new float[1024][IN];
            for (float[] x : pool) {
                for (int i = 0; i < IN; i++) {
                    x[i] = random.nextFloat() * 2 - 1;
                }
            }
        }

        @Override
        public RowData map(Long index) {
            return GenericRowData.of(new GenericArrayData(pool[(int) (index % pool.length)]));
        }
    }

    /** Notes the time of the rows/4-th and the last row it sees (the job runs in this JVM). */
    static final class Clock implements MapFunction<Row, Row> {
        private static final long serialVersionUID = 1L;
        static volatile long rows;
        static volatile long quarter;
        static volatile long last;
        static volatile long quarterCpu;
        static volatile long lastCpu;
        static final AtomicLong SEEN = new AtomicLong();

        static void reset(long n) {
            rows = n;
            quarter = 0;
            last = 0;
            SEEN.set(0);
        }

        @Override
        public Row map(Row row) {
            long n = SEEN.incrementAndGet();
            if (n == rows / 4) {
                quarter = System.nanoTime();
                quarterCpu = processCpuNanos();
            }
            if (n == rows) {
                last = System.nanoTime();
                lastCpu = processCpuNanos();
            }
            return row;
        }
    }

    private static float[][] matrix(Random random, int rows, int cols) {
        float[][] m = new float[rows][cols];
        float scale = (float) (1 / Math.sqrt(rows));
        for (float[] row : m) {
            for (int j = 0; j < cols; j++) {
                row[j] = (random.nextFloat() * 2 - 1) * scale;
            }
        }
        return m;
    }

    private static float[] vector(Random random, int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = random.nextFloat() * 0.1f;
        }
        return v;
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }
}
