package io.flinkdevices.samples.gpu;

import io.flinkdevices.job.batch.BatchCodec;
import io.flinkdevices.job.batch.BatchSettings;
import io.flinkdevices.job.batch.DeviceBatchOperator;
import io.flinkdevices.job.batch.NoComputeBackend;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.Locale;

/**
 * What the pipeline around a device can move, with no device: vectors of {@code dims} floats from
 * a parallel source, chained to a {@link DeviceBatchOperator} over a {@link NoComputeBackend}
 * (fill the batch buffers, read every byte, no kernel) and a sink, on a local Flink cluster in this
 * JVM; then the matrix-vector job on its CPU path ({@link MatrixVectorLocal}, simulated GPUs), whose
 * end-to-end figure sits beside its operator's own throughput inside the batch calls.
 *
 * <pre>
 * ./mvnw -q -pl samples-local -am package -DskipTests -Ppipeline-throughput
 * java -cp CLASSPATH io.flinkdevices.samples.gpu.PipelineThroughput [--records 20000000] [--dims 256]
 *     [--batch 4096] [--slots 2] [--parallelism 1] [--matvec-records 40000] [--modes checksum,copy]
 * </pre>
 */
public final class PipelineThroughput {

    private PipelineThroughput() {}

    public static void main(String[] args) throws Exception {
        long records = 20_000_000L;
        int dims = 256;
        int batch = 4096;
        int slots = 2;
        int parallelism = 1;
        long matvecRecords = 40_000L;
        String modes = "checksum,copy";
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
                default:
                    throw new IllegalArgumentException("unknown argument " + args[i] + "; expected --records, --dims,"
                            + " --batch, --slots, --parallelism, --matvec-records, --modes");
            }
        }
        BatchSettings settings = BatchSettings.of(batch, slots, Duration.ofMillis(100));
        System.out.printf(Locale.ROOT, "pipeline: %d records of %d floats, %s, parallelism %d, %d cores%n",
                records, dims, settings, parallelism, Runtime.getRuntime().availableProcessors());
        for (String mode : modes.split(",")) {
            if (mode.isBlank()) {
                continue;
            }
            NoComputeBackend.Mode m = NoComputeBackend.Mode.valueOf(mode.trim().toUpperCase(Locale.ROOT));
            long ms = plumbing(records, dims, settings, parallelism, m);
            System.out.printf(Locale.ROOT, "  source -> batching -> no-compute (%s) -> sink: %.2f s, %.2f M records/s,"
                    + " %.2f GiB/s of vectors in%n", mode.trim(), ms / 1e3, records / (ms / 1e3) / 1e6,
                    records * (double) dims * Float.BYTES / (ms / 1e3) / (1L << 30));
        }
        if (matvecRecords > 0) {
            MatrixVectorJob.Result r = MatrixVectorLocal.run(Math.min(batch, 4096), matvecRecords, dims, parallelism);
            System.out.println(r.summary());
            double inside = r.recordsCpu / Math.max(1e-9, r.nanosCpu / 1e9);
            double endToEnd = r.recordsCpu / Math.max(1e-3, r.jobMillis / 1e3);
            System.out.printf(Locale.ROOT, "  CPU path: end to end %.0f records/s, inside the batch calls %.0f records/s"
                    + " (all subtasks): end to end is %.1f%% of it%n", endToEnd, inside, 100 * endToEnd / inside);
        }
    }

    /** Runs the no-compute pipeline once; returns Flink's net job time in milliseconds. */
    static long plumbing(long records, int dims, BatchSettings settings, int parallelism, NoComputeBackend.Mode mode)
            throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism);
        env.getConfig().enableObjectReuse();
        int recordBytes = dims * Float.BYTES;
        env.fromSequence(0, records - 1)
                .map(new Vectors(dims))
                .transform("no-compute batches", Types.LONG,
                        new DeviceBatchOperator<>(settings, NoComputeBackend.factory(mode, recordBytes),
                                new ChecksumCodec(dims, mode)))
                .map(new Count())
                .sinkTo(new DiscardingSink<>());
        JobExecutionResult r = env.execute("pipeline throughput (" + mode + ")");
        Object counted = r.getAccumulatorResult("records");
        if (counted == null || ((Number) counted).longValue() != records) {
            throw new IllegalStateException("the sink counted " + counted + " records, not " + records);
        }
        return r.getNetRuntime();
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

    /** Vectors in; out, a long per record: its checksum, or in copy mode the sum of its first and last float bits. */
    static final class ChecksumCodec implements BatchCodec<IdVector, Long> {
        private static final long serialVersionUID = 1L;
        private final int dims;
        private final NoComputeBackend.Mode mode;
        private transient ByteBuffer last;
        private transient FloatBuffer floats;
        private transient ByteBuffer lastOut;
        private transient FloatBuffer outFloats;

        ChecksumCodec(int dims, NoComputeBackend.Mode mode) {
            this.dims = dims;
            this.mode = mode;
        }

        @Override
        public void encode(IdVector v, ByteBuffer input, int offset) {
            if (input != last) {
                last = input;
                floats = input.asFloatBuffer();
            }
            floats.put(offset / Float.BYTES, v.values, 0, dims);
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

    /** Counts what reaches the sink. */
    static final class Count extends RichMapFunction<Long, Long> {
        private static final long serialVersionUID = 1L;
        private transient LongCounter records;

        @Override
        public void open(OpenContext ctx) {
            records = getRuntimeContext().getLongCounter("records");
        }

        @Override
        public Long map(Long value) {
            records.add(1);
            return value;
        }
    }
}
