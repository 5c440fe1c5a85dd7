package io.flinkdevices.samples.gpu;

import io.flinkdevices.job.batch.DeviceBatchOperator;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.accumulators.LongMaximum;
import org.apache.flink.api.common.accumulators.LongMinimum;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

import java.lang.management.ManagementFactory;
import java.util.Locale;

/**
 * The GPU sample job: batched matrix-vector multiplication on the GPUs a TaskManager's driver
 * hands out, submitted with {@code flink run}:
 *
 * <pre>
 * flink run -c io.flinkdevices.samples.gpu.MatrixVectorJob samples-job.jar [--batch 256]
 *     [--slots 2] [--timeout-ms 100] [--records 200000] [--dims 256]
 *     [--parallelism N | --gpus G --per-gpu N] [--resource gpu]
 * </pre>
 *
 * A parallel source generates {@code records} vectors of {@code dims} floats, chained to a {@link
 * DeviceBatchOperator} that multiplies each with one {@code dims x dims} matrix, {@code batch}
 * vectors per device call and up to {@code slots} batches in flight, on the subtask's GPU (cuBLAS,
 * or the sample's own CUDA kernel) or on the CPU where the subtask has none ({@link
 * MatVecBatchFactory}); every 1009th product is checked against {@link Matrix#multiplyExact}. Every
 * operator runs at the same parallelism and is chained: a vector goes from the source to the
 * device buffer as a Java reference, never serialized. Object reuse is on: every operator makes a
 * new record and none holds one it passed on. {@code MatrixVectorLocal} (module {@code samples-local}) runs the same
 * job on a local device cluster.
 */
public final class MatrixVectorJob {

    /** Resource name as in {@code external-resources: gpu}. */
    static final String RESOURCE = "gpu";

    static final long MATRIX_SEED = 42L;
    static final long VECTOR_SEED = 7L;
    static final int CHECK_EVERY = 1009;

    private MatrixVectorJob() {}

    /**
     * Submits the job to the cluster {@code flink run} (or the environment) provides; see {@link
     * MatrixVectorJobArgs} for the arguments. Prints the paths the subtasks used, the throughput and
     * the check, and says so when no subtask computed on a GPU; exits 1 when a checked product is
     * wrong or records are missing, 2 on a bad argument.
     */
    public static void main(String[] args) throws Exception {
        MatrixVectorJobArgs a;
        try {
            a = MatrixVectorJobArgs.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("MatrixVectorJob: " + e.getMessage() + " (see --help)");
            System.exit(2);
            return;
        }
        if (a.help) {
            System.out.print(MatrixVectorJobArgs.USAGE);
            return;
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        if (a.jobParallelism() > 0) {
            env.setParallelism(a.jobParallelism());
        }
        Result r = execute(env, a);
        System.out.println(r.summary());
        if (r.subtasksGpu == 0) {
            System.out.println("Every subtask ran on the CPU path: none received a GPU of resource '" + a.resource
                    + "' that CUDA could open. Each subtask's reason is in its TaskManager's stdout ('MatrixVectorJob"
                    + " subtask N: CPU path ..., because ...'); the driver's 'handing out' line in the TaskManager log"
                    + " says what it handed out.");
        }
        System.exit(r.mismatches == 0 && r.records() == a.records ? 0 : 1);
    }

    /** Builds the job on {@code env} (parallelism as set there), runs it and returns what it measured. */
    public static Result execute(StreamExecutionEnvironment env, int batch, long records, int dims, String resource)
            throws Exception {
        return execute(env, MatrixVectorJobArgs.of(batch, records, dims, resource));
    }

    static Result execute(StreamExecutionEnvironment env, MatrixVectorJobArgs a) throws Exception {
        env.getConfig().enableObjectReuse();
        products(env, a).map(new CheckSample(a.dims)).sinkTo(new DiscardingSink<>());
        return new Result(env.execute("MatrixVectorJob"), a.batch, a.dims);
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
        /**
         * From the first vector generated to the last product checked, over all subtasks: the job
         * without its deployment and teardown.
         */
        public final long streamMillis;
        /** The task threads' CPU time from their first vector to their last product (all subtasks). */
        public final long taskCpuNanos;
        /** The task threads' CPU time inside the CPU path's batch calls. */
        public final long cpuNanosCpu;
        /** The task threads' CPU time inside the GPU path's batch calls. */
        public final long cpuNanosGpu;
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
            Object first = r.getAccumulatorResult("first-record-ms");
            Object last = r.getAccumulatorResult("last-product-ms");
            this.streamMillis = first == null || last == null
                    ? jobMillis
                    : Math.max(1, ((Number) last).longValue() - ((Number) first).longValue());
            this.taskCpuNanos = counter(r, "task-cpu-nanos") - counter(r, "task-cpu-start-nanos");
            this.cpuNanosCpu = counter(r, "cpu-nanos-cpu");
            this.cpuNanosGpu = counter(r, "cpu-nanos-gpu");
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
            if (taskCpuNanos > 0) {
                sb.append(String.format(Locale.ROOT,
                        "  task threads' CPU from first vector to last product %.2f s, %.1f%% of it inside the batch calls%n",
                        taskCpuNanos / 1e9, 100.0 * (cpuNanosCpu + cpuNanosGpu) / taskCpuNanos));
            }
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
                                    + " (%.2f GFLOP/s); end to end %.0f records/s (job), %.0f records/s (first"
                                    + " vector to last product, %.2f s)%n",
                            path,
                            subtasks,
                            recs,
                            perSubtask,
                            perSubtask * 2.0 * dims * dims / 1e9,
                            recs / Math.max(1e-3, jobMillis / 1e3),
                            recs / Math.max(1e-3, streamMillis / 1e3),
                            streamMillis / 1e3));
        }

        private static long counter(JobExecutionResult r, String name) {
            Object v = r.getAccumulatorResult(name);
            return v == null ? 0 : ((Number) v).longValue();
        }
    }

    /** The job's pipeline up to the products: generated vectors through the batched operator. */
    static DataStream<IdVector> products(StreamExecutionEnvironment env, long records, int dims, int batch) {
        return products(env, MatrixVectorJobArgs.of(batch, records, dims, RESOURCE));
    }

    /** The same, with the job's arguments (batching, the GPUs' resource name). */
    static DataStream<IdVector> products(StreamExecutionEnvironment env, MatrixVectorJobArgs a) {
        return env.fromSequence(0, a.records - 1)
                .map(new Generate(a.dims))
                .name("generate vectors")
                .transform(
                        "batched matrix x vector",
                        TypeInformation.of(IdVector.class),
                        new DeviceBatchOperator<>(
                                a.settings(),
                                new MatVecBatchFactory(a.resource, a.dims, a.dims, MATRIX_SEED, a.share()),
                                new MatVecCodec(a.dims, a.dims)));
    }

    /** Source side: the vector for an id; notes when the subtask's first vector was made. */
    static final class Generate extends RichMapFunction<Long, IdVector> {
        private static final long serialVersionUID = 1L;
        private final int dims;
        private transient boolean started;

        Generate(int dims) {
            this.dims = dims;
        }

        @Override
        public IdVector map(Long id) {
            if (!started) {
                started = true;
                getRuntimeContext().addAccumulator("first-record-ms", new LongMinimum(System.currentTimeMillis()));
                // chained to the check: the same thread, so the CPU it used from here to the check's close
                getRuntimeContext().getLongCounter("task-cpu-start-nanos")
                        .add(ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime());
            }
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
        public void close() {
            // after the subtask's last product: with first-record-ms, the streaming window
            getRuntimeContext().addAccumulator("last-product-ms", new LongMaximum(System.currentTimeMillis()));
            // the chain's thread (source to sink): its CPU time beside the batch calls' share of it
            getRuntimeContext().getLongCounter("task-cpu-nanos")
                    .add(ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime());
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
}
