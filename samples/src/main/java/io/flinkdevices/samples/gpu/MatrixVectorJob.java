package io.flinkdevices.samples.gpu;

import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.simulated.SimulatedDevices;
import io.flinkdevices.testkit.simulated.SimulatedGpuDriverFactory;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Locale;
import java.util.Map;

/**
 * The GPU sample job: batched matrix-vector multiplication on a local device cluster.
 *
 * <pre>
 * MatrixVectorJob [batch size (256)] [records (200000)] [dims (256)] [parallelism (2)] [simulated | nvidia[=PATH]]
 * </pre>
 *
 * A source generates {@code records} vectors of {@code dims} floats; {@link
 * BatchedMatVecOperator} multiplies each with one {@code dims x dims} matrix, {@code batch size}
 * vectors per device call; every 97th product is checked against {@link Matrix#multiplyExact}.
 * The TaskManager gets its GPUs from a plugin: by default the testkit's simulated GPU driver (the
 * subtasks take the CPU path and say why); with {@code nvidia} flink-devices' NVIDIA driver
 * ({@code io.flinkdevices.nvidia.NvidiaGpuDriverFactory}, nvidia-smi backend, {@code nvidia-smi}
 * from the {@code PATH} or {@code PATH} given), so on a GPU host the subtasks take the GPU path.
 * The job prints the path each subtask used and its throughput. Exits 1 when a checked product
 * is wrong or a record is missing.
 */
public final class MatrixVectorJob {

    /** Resource name as in {@code external-resources: gpu}. */
    static final String RESOURCE = "gpu";

    static final long MATRIX_SEED = 42L;
    static final long VECTOR_SEED = 7L;
    static final int CHECK_EVERY = 97;

    private MatrixVectorJob() {}

    /** Runs the job; see the class comment for the arguments. */
    public static void main(String[] args) throws Exception {
        int batch = args.length > 0 ? Integer.parseInt(args[0]) : 256;
        long records = args.length > 1 ? Long.parseLong(args[1]) : 200_000L;
        int dims = args.length > 2 ? Integer.parseInt(args[2]) : 256;
        int parallelism = args.length > 3 ? Integer.parseInt(args[3]) : 2;
        Devices devices = Devices.parse(args.length > 4 ? args[4] : "simulated");
        Result r = run(batch, records, dims, parallelism, devices);
        System.out.println();
        System.out.println(r.summary());
        System.exit(r.mismatches == 0 && r.records() == records ? 0 : 1);
    }

    /** What one run measured. */
    public static final class Result {
        /** Products computed on each path. */
        public final long recordsGpu;
        /** Products computed on each path. */
        public final long recordsCpu;
        /** Nanoseconds inside the batch calls (copies included), summed over subtasks. */
        public final long nanosGpu;
        /** Nanoseconds inside the batch calls, summed over subtasks. */
        public final long nanosCpu;
        /** Subtasks that used each path. */
        public final long subtasksGpu;
        /** Subtasks that used each path. */
        public final long subtasksCpu;
        /** Products checked against the double-precision reference, and how many were wrong. */
        public final long checked;
        /** Products checked against the double-precision reference, and how many were wrong. */
        public final long mismatches;
        /** Job wall time, as Flink reports it. */
        public final long jobMillis;
        final int batch;
        final int dims;

        Result(JobExecutionResult r, int batch, int dims) {
            this.recordsGpu = counter(r, "records-gpu");
            this.recordsCpu = counter(r, "records-cpu");
            this.nanosGpu = counter(r, "nanos-gpu");
            this.nanosCpu = counter(r, "nanos-cpu");
            this.subtasksGpu = counter(r, "subtasks-gpu");
            this.subtasksCpu = counter(r, "subtasks-cpu");
            this.checked = counter(r, "checked");
            this.mismatches = counter(r, "mismatches");
            this.jobMillis = r.getNetRuntime();
            this.batch = batch;
            this.dims = dims;
        }

        /** All products computed. */
        public long records() {
            return recordsGpu + recordsCpu;
        }

        String summary() {
            StringBuilder sb = new StringBuilder();
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "MatrixVectorJob: %d records of %d floats x %dx%d matrix, batch %d, job %.2f s%n",
                            records(),
                            dims,
                            dims,
                            dims,
                            batch,
                            jobMillis / 1e3));
            line(sb, "GPU", subtasksGpu, recordsGpu, nanosGpu);
            line(sb, "CPU", subtasksCpu, recordsCpu, nanosCpu);
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "  checked %d products against the double-precision reference: %d wrong",
                            checked,
                            mismatches));
            return sb.toString();
        }

        private void line(StringBuilder sb, String path, long subtasks, long recs, long nanos) {
            if (subtasks == 0) {
                return;
            }
            double perSubtask = recs / Math.max(1e-9, nanos / 1e9 / subtasks) / subtasks;
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "  %s path: %d subtask(s), %d records; inside batch calls %.0f records/s per subtask"
                                    + " (%.2f GFLOP/s); end to end %.0f records/s%n",
                            path,
                            subtasks,
                            recs,
                            perSubtask,
                            perSubtask * 2.0 * dims * dims / 1e9,
                            recs / Math.max(1e-3, jobMillis / 1e3)));
        }

        private static long counter(JobExecutionResult r, String name) {
            Object v = r.getAccumulatorResult(name);
            return v == null ? 0 : ((Number) v).longValue();
        }
    }

    /** Where the TaskManager's GPUs come from. */
    public static final class Devices {
        final boolean nvidia;
        final String nvidiaSmi;

        private Devices(boolean nvidia, String nvidiaSmi) {
            this.nvidia = nvidia;
            this.nvidiaSmi = nvidiaSmi;
        }

        /** The testkit's simulated GPU driver: 4 GPUs of vendor {@code simulated}. */
        public static Devices simulated() {
            return new Devices(false, null);
        }

        /**
         * flink-devices' NVIDIA driver with its nvidia-smi backend.
         *
         * @param nvidiaSmi the {@code nvidia-smi} to run, or null for the one on the {@code PATH}
         */
        public static Devices nvidia(String nvidiaSmi) {
            return new Devices(true, nvidiaSmi);
        }

        static Devices parse(String arg) {
            if (arg.equals("simulated")) {
                return simulated();
            }
            if (arg.equals("nvidia")) {
                return nvidia(null);
            }
            if (arg.startsWith("nvidia=")) {
                return nvidia(arg.substring("nvidia=".length()));
            }
            throw new IllegalArgumentException(
                    "devices must be 'simulated', 'nvidia' or 'nvidia=/path/to/nvidia-smi' but is '" + arg + "'");
        }
    }

    /**
     * Starts a local device cluster with one TaskManager holding {@code parallelism} GPUs of the
     * simulated driver and runs the job.
     */
    public static Result run(int batch, long records, int dims, int parallelism) throws Exception {
        return run(batch, records, dims, parallelism, Devices.simulated());
    }

    /**
     * Starts a local device cluster with one TaskManager that takes {@code parallelism} GPUs from
     * {@code devices} and runs the job.
     */
    public static Result run(int batch, long records, int dims, int parallelism, Devices devices)
            throws Exception {
        Path work = Files.createTempDirectory("flink-devices-matvec");
        try {
            Path plugins = work.resolve("plugins");
            LocalDeviceCluster.Builder builder =
                    LocalDeviceCluster.builder().pluginsDir(plugins).taskManagers(1).slotsPerTaskManager(parallelism);
            if (devices.nvidia) {
                NvidiaPlugin.install(plugins);
                Map<String, String> params = new java.util.HashMap<>();
                params.put("backend", "nvidia-smi");
                if (devices.nvidiaSmi != null) {
                    params.put("nvidia-smi.path", devices.nvidiaSmi);
                }
                builder.resource(RESOURCE, NvidiaPlugin.FACTORY, parallelism, params);
            } else {
                SimulatedDevices.installGpuPlugin(plugins);
                builder.resource(
                        RESOURCE,
                        SimulatedGpuDriverFactory.class.getName(),
                        parallelism,
                        Map.of("count", Integer.toString(Math.max(4, parallelism))));
            }
            try (LocalDeviceCluster cluster = builder.build().start()) {
                StreamExecutionEnvironment env = cluster.createEnvironment();
                env.setParallelism(parallelism);
                products(env, records, dims, batch)
                        .map(new CheckSample(dims))
                        .sinkTo(new DiscardingSink<>());
                return new Result(env.execute("MatrixVectorJob"), batch, dims);
            }
        } finally {
            deleteRecursively(work);
        }
    }

    /** The job's pipeline up to the products: generated vectors through the batched operator. */
    static DataStream<IdVector> products(StreamExecutionEnvironment env, long records, int dims, int batch) {
        return env.fromSequence(0, records - 1)
                .map(new Generate(dims))
                .transform(
                        "batched matrix x vector",
                        TypeInformation.of(IdVector.class),
                        new BatchedMatVecOperator(RESOURCE, dims, dims, MATRIX_SEED, batch));
    }

    /** Source side: the vector for an id. */
    static final class Generate implements MapFunction<Long, IdVector> {
        private static final long serialVersionUID = 1L;
        private final int dims;

        Generate(int dims) {
            this.dims = dims;
        }

        @Override
        public IdVector map(Long id) {
            return IdVector.generate(id, dims, VECTOR_SEED);
        }
    }

    /** Checks every {@value #CHECK_EVERY}th product against the double-precision reference. */
    static final class CheckSample extends RichMapFunction<IdVector, IdVector> {
        private static final long serialVersionUID = 1L;
        private final int dims;
        private transient Matrix matrix;
        private transient LongCounter checked;
        private transient LongCounter mismatches;

        CheckSample(int dims) {
            this.dims = dims;
        }

        @Override
        public void open(OpenContext ctx) {
            matrix = Matrix.generate(dims, dims, MATRIX_SEED);
            checked = getRuntimeContext().getLongCounter("checked");
            mismatches = getRuntimeContext().getLongCounter("mismatches");
        }

        @Override
        public IdVector map(IdVector product) {
            if (product.id % CHECK_EVERY == 0) {
                checked.add(1);
                double[] exact = matrix.multiplyExact(IdVector.generate(product.id, dims, VECTOR_SEED).values);
                for (int r = 0; r < exact.length; r++) {
                    if (Math.abs(exact[r] - product.values[r]) > matrix.tolerance()) {
                        mismatches.add(1);
                        break;
                    }
                }
            }
            return product;
        }
    }

    private static void deleteRecursively(Path root) throws java.io.IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (var paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
