package io.flinkdevices.samples.gpu;

import io.flinkdevices.job.batch.BatchCodec;
import io.flinkdevices.job.batch.BatchListener;
import io.flinkdevices.job.batch.BatchSettings;
import io.flinkdevices.job.batch.Batcher;
import io.flinkdevices.job.batch.DeviceBatchOperator;
import io.flinkdevices.job.batch.NoComputeBackend;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.Locale;

/**
 * What the pipeline around a device can move, with no device: vectors of {@code dims} floats from
 * a parallel source, chained to a {@link DeviceBatchOperator} over a {@link NoComputeBackend}
 * (fill the batch buffers, read every byte, no kernel) and a sink, on a local Flink cluster in this
 * JVM; before it the {@link Batcher} alone on this thread; after it the matrix-vector job on its CPU
 * path ({@link MatrixVectorLocal}, simulated GPUs), whose end-to-end figure sits beside its
 * operator's own throughput inside the batch calls.
 *
 * <pre>
 * ./mvnw -q -pl samples-local -am package -DskipTests -Ppipeline-throughput
 * java -cp CLASSPATH io.flinkdevices.samples.gpu.PipelineThroughput [--records 20000000] [--dims 256]
 *     [--batch 4096] [--slots 2] [--parallelism 1] [--matvec-records 40000] [--modes checksum,copy]
 *     [--variants chained,no-reuse,network]
 * </pre>
 */
public final class PipelineThroughput {

    private PipelineThroughput() {}

    /** How the source reaches the batching operator. */
    enum Variant {
        /** Chained, object reuse on: a vector passes as a reference (the sample job's way). */
        CHAINED,
        /** Chained, object reuse off: Flink copies every vector between chained operators. */
        NO_REUSE,
        /** A network hop between source and batching (rebalance): every vector serialized and read back. */
        NETWORK
    }

    public static void main(String[] args) throws Exception {
        long records = 20_000_000L;
        int dims = 256;
        int batch = 4096;
        int slots = 2;
        int parallelism = 1;
        long matvecRecords = 40_000L;
        String modes = "checksum,copy";
        String variants = "chained";
        for (int i = 0; i + 1 < args.length; i += 2) {
            String v = args[i + 1];
            switch (args[i]) {
                case "--records": records = Long.parseLong(v); break;
                case "--dims": dims = Integer.parseInt(v); break;
                case "--batch": batch = Integer.parseInt(v); break;
                case "--slots": slots = Integer.parseInt(v); break;
                case "--parallelism": parallelism = Integer.parseInt(v); break;
                case "--matvec-records": matvecRecords = Long.parseLong(v); break;
                case "--modes": modes = v; break;
                case "--variants": variants = v; break;
                default:
                    throw new IllegalArgumentException("unknown argument " + args[i] + "; expected --records, --dims,"
                            + " --batch, --slots, --parallelism, --matvec-records, --modes, --variants");
            }
        }
        BatchSettings settings = BatchSettings.of(batch, slots, Duration.ofMillis(100));
        System.out.printf(Locale.ROOT, "pipeline: %d records of %d floats, %s, parallelism %d, %d cores%n",
                records, dims, settings, parallelism, Runtime.getRuntime().availableProcessors());
        long[] alone = batcherAlone(records, dims, settings);
        System.out.printf(Locale.ROOT, "  the block alone (no Flink: new vector, Batcher.add, checksum, emit): %.2f M"
                + " records/s; this thread's CPU %.2f s: %.2f M records per CPU second%n",
                records / (alone[0] / 1e9) / 1e6, alone[1] / 1e9, records / (alone[1] / 1e9) / 1e6);
        for (String variantName : variants.split(",")) {
            Variant variant = Variant.valueOf(variantName.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
            for (String mode : modes.split(",")) {
                if (!mode.isBlank()) {
                    NoComputeBackend.Mode m = NoComputeBackend.Mode.valueOf(mode.trim().toUpperCase(Locale.ROOT));
                    report(variant, m, records, dims, plumbing(records, dims, settings, parallelism, m, variant));
                }
            }
        }
        if (matvecRecords > 0) {
            MatrixVectorJob.Result r = MatrixVectorLocal.run(Math.min(batch, 4096), matvecRecords, dims, parallelism);
            System.out.println(r.summary());
            double inside = r.recordsCpu / Math.max(1e-9, r.nanosCpu / 1e9) * Math.max(1, r.subtasksCpu);
            double job = r.recordsCpu / Math.max(1e-3, r.jobMillis / 1e3);
            double stream = r.recordsCpu / Math.max(1e-3, r.streamMillis / 1e3);
            System.out.printf(Locale.ROOT, "  CPU path: inside the batch calls %.0f records/s (all subtasks); first vector"
                    + " to last product %.0f records/s = %.1f%% of it; whole job (deployment included) %.0f records/s"
                    + " = %.1f%%%n", inside, stream, 100 * stream / inside, job, 100 * job / inside);
        }
    }

    private static void report(Variant variant, NoComputeBackend.Mode mode, long records, int dims, long[] msAndCpu) {
        double s = msAndCpu[0] / 1e3;
        double cpu = msAndCpu[1] / 1e9;
        String cpuPart = cpu > 0
                ? String.format(Locale.ROOT, "; task thread's CPU %.2f s: %.2f M records per CPU second", cpu,
                        records / cpu / 1e6)
                : "";
        System.out.printf(Locale.ROOT, "  %s: source -> batching -> no-compute (%s) -> sink: %.2f s, %.2f M records/s"
                        + " (%.2f GiB/s of vectors in)%s%n",
                variant.name().toLowerCase(Locale.ROOT).replace('_', '-'), mode.name().toLowerCase(Locale.ROOT), s,
                records / s / 1e6, records * (double) dims * Float.BYTES / s / (1L << 30), cpuPart);
    }

    /** The Batcher without Flink on this thread: returns wall and CPU nanoseconds. */
    static long[] batcherAlone(long records, int dims, BatchSettings settings) throws Exception {
        long[] sum = new long[1];
        Vectors vectors = new Vectors(dims);
        NoComputeBackend backend = NoComputeBackend.open(NoComputeBackend.Mode.CHECKSUM, settings, dims * Float.BYTES);
        try (Batcher<IdVector, Long> b = new Batcher<>(backend, new ChecksumCodec(dims, NoComputeBackend.Mode.CHECKSUM),
                (r, ts) -> sum[0] += r, BatchListener.NONE)) {
            long cpu0 = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            for (long i = 0; i < records; i++) {
                b.add(vectors.map(i), Batcher.NO_TIMESTAMP);
            }
            b.drain();
            long wall = System.nanoTime() - t0;
            long cpu = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - cpu0;
            if (sum[0] == 42) {
                System.out.println(); // keeps the sums alive
            }
            return new long[] {wall, cpu};
        }
    }

    /**
     * Runs the no-compute pipeline once; returns Flink's net job time in milliseconds and the CPU
     * nanoseconds of the task thread (the whole chain runs on it at parallelism 1; 0 where there
     * is more than one chain), which says what the pipeline costs where other work shares the cores.
     */
    static long[] plumbing(long records, int dims, BatchSettings settings, int parallelism, NoComputeBackend.Mode mode,
            Variant variant) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism);
        if (variant != Variant.NO_REUSE) {
            env.getConfig().enableObjectReuse();
        }
        int recordBytes = dims * Float.BYTES;
        DataStream<IdVector> vectors = env.fromSequence(0, records - 1).map(new Vectors(dims));
        if (variant == Variant.NETWORK) {
            // the same parallelism, but each vector serialized to the batching subtask and read back
            vectors = vectors.rebalance();
        }
        vectors.transform("no-compute batches", Types.LONG,
                        new DeviceBatchOperator<>(settings, NoComputeBackend.factory(mode, recordBytes),
                                new ChecksumCodec(dims, mode)))
                .map(new Count())
                .sinkTo(new DiscardingSink<>());
        JobExecutionResult r = env.execute("pipeline throughput (" + mode + ", " + variant + ")");
        Object counted = r.getAccumulatorResult("records");
        if (counted == null || ((Number) counted).longValue() != records) {
            throw new IllegalStateException("the sink counted " + counted + " records, not " + records);
        }
        Object cpu = r.getAccumulatorResult("task-cpu-nanos");
        boolean oneChain = parallelism == 1 && variant != Variant.NETWORK;
        return new long[] {r.getNetRuntime(), oneChain && cpu != null ? ((Number) cpu).longValue() : 0};
    }

    /** A source-side vector per id: a new array per record, as a real source makes. */
    static final class Vectors implements MapFunction<Long, IdVector> {
        private static final long serialVersionUID = 1L;
        private final int dims;
        private transient float[] template;

        Vectors(int dims) {
            this.dims = dims;
        }

        @Override
        public IdVector map(Long id) {
            if (template == null) {
                template = IdVector.generate(0, dims, 7L).values;
            }
            float[] v = template.clone();
            v[0] = id;
            return new IdVector(id, v);
        }
    }

    /** Vectors in; out, a long per record: its checksum, or in copy mode a sum of its first and last float bits. */
    static final class ChecksumCodec implements BatchCodec<IdVector, Long> {
        private static final long serialVersionUID = 1L;
        private final int dims;
        private final NoComputeBackend.Mode mode;
        private transient ByteBuffer lastIn;
        private transient FloatBuffer inFloats;
        private transient ByteBuffer lastOut;
        private transient FloatBuffer outFloats;

        ChecksumCodec(int dims, NoComputeBackend.Mode mode) {
            this.dims = dims;
            this.mode = mode;
        }

        @Override
        public void encode(IdVector v, ByteBuffer input, int offset) {
            if (input != lastIn) {
                lastIn = input;
                inFloats = input.asFloatBuffer();
            }
            inFloats.put(offset / Float.BYTES, v.values, 0, dims);
        }

        @Override
        public Long decode(IdVector v, ByteBuffer output, int offset) {
            if (mode == NoComputeBackend.Mode.CHECKSUM) {
                return output.getLong(offset);
            }
            if (output != lastOut) {
                lastOut = output;
                outFloats = output.asFloatBuffer();
            }
            float[] copy = new float[dims];
            outFloats.get(offset / Float.BYTES, copy, 0, dims);
            return (long) Float.floatToRawIntBits(copy[0]) + Float.floatToRawIntBits(copy[dims - 1]);
        }
    }

    /** Counts what reaches the sink; at the end, the CPU time of its task thread (the chain's). */
    static final class Count extends RichMapFunction<Long, Long> {
        private static final long serialVersionUID = 1L;
        private transient LongCounter records;

        @Override
        public void open(OpenContext ctx) {
            records = getRuntimeContext().getLongCounter("records");
        }

        @Override
        public void close() {
            getRuntimeContext().getLongCounter("task-cpu-nanos")
                    .add(ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime());
        }

        @Override
        public Long map(Long value) {
            records.add(1);
            return value;
        }
    }
}
