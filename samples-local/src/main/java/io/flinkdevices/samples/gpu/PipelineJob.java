package io.flinkdevices.samples.gpu;

import io.flinkdevices.job.batch.BatchCodec;
import io.flinkdevices.job.batch.BatchSettings;
import io.flinkdevices.job.batch.DeviceBatchOperator;
import io.flinkdevices.job.batch.NoComputeBackend;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;

/**
 * The job {@link PipelineThroughput} measures: vectors from {@code fromSequence} and a map that
 * makes a new vector per record, into a {@link DeviceBatchOperator} over a {@link
 * NoComputeBackend}, then a counting map and a discarding sink, on a local Flink cluster in this JVM.
 */
final class PipelineJob {

    /** How the source reaches the batching operator. */
    enum Variant {
        /** Chained, object reuse on: a vector passes as a reference (the sample job's way). */
        CHAINED,
        /** Chained, object reuse off: Flink copies every vector between chained operators. */
        NO_REUSE,
        /** A network hop between source and batching (rebalance): every vector serialized and read back. */
        NETWORK
    }

    /** What one run measured. */
    record Run(long netMillis, long taskCpuNanos, long processCpuNanos) {}

    private PipelineJob() {}

    /**
     * Runs the job once at {@code parallelism} and checks that the sink counted every record and
     * that the results add up to {@link #expectedSum} (every vector's bytes went through). Returns
     * Flink's net job time, the CPU time of the task threads from their operators' open to their
     * close (summed over subtasks, every thread of the pipeline counted once), and the whole
     * process's CPU time over the run (the mini cluster, JIT compilers and GC included).
     */
    static Run run(long records, int dims, BatchSettings settings, int parallelism, NoComputeBackend.Mode mode,
            Variant variant) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism);
        if (variant != Variant.NO_REUSE) {
            env.getConfig().enableObjectReuse();
        }
        int recordBytes = dims * Float.BYTES;
        // chained, the source's map and the counting map share a thread: only the last one counts it
        DataStream<IdVector> vectors = env.fromSequence(0, records - 1).map(new Vectors(dims, variant == Variant.NETWORK));
        if (variant == Variant.NETWORK) {
            // the same parallelism, but each vector serialized to the batching subtask and read back
            vectors = vectors.rebalance();
        }
        vectors.transform("no-compute batches", Types.LONG,
                        new DeviceBatchOperator<>(settings, NoComputeBackend.factory(mode, recordBytes),
                                new ChecksumCodec(dims, mode)))
                .map(new Count())
                .sinkTo(new DiscardingSink<>());
        long cpu0 = processCpuNanos();
        JobExecutionResult r = env.execute("pipeline throughput (" + mode + ", " + variant + ")");
        long processCpu = processCpuNanos() - cpu0;
        Object counted = r.getAccumulatorResult("records");
        if (counted == null || ((Number) counted).longValue() != records) {
            throw new IllegalStateException("the sink counted " + counted + " records, not " + records);
        }
        Object sum = r.getAccumulatorResult(Count.SUM);
        long expected = expectedSum(records, dims, mode);
        if (sum == null || ((Number) sum).longValue() != expected) {
            throw new IllegalStateException("the results at the sink add up to " + sum + ", not " + expected
                    + ": a vector's bytes did not reach the backend intact");
        }
        Object cpu = r.getAccumulatorResult(Count.TASK_CPU);
        return new Run(r.getNetRuntime(), cpu == null ? 0 : ((Number) cpu).longValue(), processCpu);
    }

    /**
     * What the results of {@code records} vectors add up to: in checksum mode each is the sum of
     * its vector read as native-order longs, in copy mode the sum of its first and last float's bits.
     */
    static long expectedSum(long records, int dims, NoComputeBackend.Mode mode) {
        float[] template = Vectors.template(dims);
        ByteBuffer b = ByteBuffer.allocate(dims * Float.BYTES).order(ByteOrder.nativeOrder());
        b.asFloatBuffer().put(template);
        long rest = 0;
        for (int at = Long.BYTES; at + Long.BYTES <= b.capacity(); at += Long.BYTES) {
            rest += b.getLong(at);
        }
        for (int at = b.capacity() & ~(Long.BYTES - 1); at < b.capacity(); at++) {
            rest += b.get(at);
        }
        long sum = 0;
        for (long id = 0; id < records; id++) {
            b.putFloat(0, id);
            sum += mode == NoComputeBackend.Mode.CHECKSUM
                    ? (dims >= 2 ? b.getLong(0) + rest : b.get(0) + b.get(1) + b.get(2) + b.get(3))
                    : (long) Float.floatToRawIntBits(id) + Float.floatToRawIntBits(dims == 1 ? id : template[dims - 1]);
        }
        return sum;
    }

    /** The CPU time of this JVM, all threads; {@code -1} where the JVM does not say. */
    static long processCpuNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    /**
     * A source-side vector per id: a new array per record, as a real source makes (a copy of one
     * generated vector with the id in its first value: a copy is what reading a record costs, not
     * generating random numbers).
     */
    static final class Vectors extends RichMapFunction<Long, IdVector> {
        private static final long serialVersionUID = 1L;
        private final int dims;
        private final boolean ownThread;
        private transient float[] template;
        private transient long cpuAtOpen;

        /** With {@code ownThread}, the function adds its thread's CPU time to the job's task CPU. */
        Vectors(int dims, boolean ownThread) {
            this.dims = dims;
            this.ownThread = ownThread;
        }

        @Override
        public void open(OpenContext ctx) {
            cpuAtOpen = Count.threadCpu();
        }

        @Override
        public void close() {
            if (ownThread) {
                getRuntimeContext().getLongCounter(Count.TASK_CPU).add(Count.threadCpu() - cpuAtOpen);
            }
        }

        static float[] template(int dims) {
            return IdVector.generate(0, dims, 7L).values;
        }

        @Override
        public IdVector map(Long id) {
            if (template == null) {
                template = template(dims);
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
            // copy mode: the record's bytes came back; a real decoder reads all of them (the
            // matrix-vector codec copies its product into a new array): so does this one
            if (output != lastOut) {
                lastOut = output;
                outFloats = output.asFloatBuffer();
            }
            float[] copy = new float[dims];
            outFloats.get(offset / Float.BYTES, copy, 0, dims);
            return (long) Float.floatToRawIntBits(copy[0]) + Float.floatToRawIntBits(copy[dims - 1]);
        }
    }

    /** Counts what reaches the sink and adds it up; at the end, its thread's CPU time since open. */
    static final class Count extends RichMapFunction<Long, Long> {
        static final String TASK_CPU = "task-cpu-nanos";
        static final String SUM = "sum";
        private static final long serialVersionUID = 1L;
        private transient LongCounter records;
        private transient LongCounter sum;
        private transient long cpuAtOpen;

        static long threadCpu() {
            return ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
        }

        @Override
        public void open(OpenContext ctx) {
            records = getRuntimeContext().getLongCounter("records");
            sum = getRuntimeContext().getLongCounter(SUM);
            cpuAtOpen = threadCpu();
        }

        @Override
        public void close() {
            getRuntimeContext().getLongCounter(TASK_CPU).add(threadCpu() - cpuAtOpen);
        }

        @Override
        public Long map(Long value) {
            records.add(1);
            sum.add(value);
            return value;
        }
    }
}
