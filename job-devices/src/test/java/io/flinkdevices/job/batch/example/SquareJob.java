package io.flinkdevices.job.batch.example;

import io.flinkdevices.job.DeviceLease;
import io.flinkdevices.job.DeviceLeases;
import io.flinkdevices.job.batch.BatchBackend;
import io.flinkdevices.job.batch.BatchBackendFactory;
import io.flinkdevices.job.batch.BatchCodec;
import io.flinkdevices.job.batch.BatchSettings;
import io.flinkdevices.job.batch.DeviceBatchOperator;
import io.flinkdevices.job.batch.LeasedBatchBackend;
import io.flinkdevices.sdk.info.GpuInfo;

import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;

/**
 * A complete job on the batching block, small enough for the job authors' guide: every record
 * (a float) goes to a device in batches and comes back squared. The "device" here is the CPU; a
 * real backend queues the batch on its device in {@code start} and waits for it in {@code finish}.
 */
public final class SquareJob {

    private SquareJob() {}

    /** The pipeline: floats in, their squares out, in order, 256 per device call, 2 calls in flight. */
    public static DataStream<Float> squares(StreamExecutionEnvironment env, long records) {
        BatchSettings settings = BatchSettings.of(256, 2, Duration.ofMillis(50));
        return env.fromSequence(0, records - 1)
                .map(i -> (float) i)
                .transform("square on the device", Types.FLOAT,
                        new DeviceBatchOperator<>(settings, new SquareBackends("gpu"), new FloatCodec()));
    }

    /** Opens each subtask's backend on the GPU it leases; the lease goes back when the backend closes. */
    static final class SquareBackends implements BatchBackendFactory {
        private static final long serialVersionUID = 1L;
        private final String resource;

        SquareBackends(String resource) {
            this.resource = resource;
        }

        @Override
        public BatchBackend open(BatchSettings settings, RuntimeContext context) {
            DeviceLease lease = DeviceLeases.acquire(context, resource);
            GpuInfo gpu = lease.first(GpuInfo::from);
            return new LeasedBatchBackend(new SquareBackend(gpu, settings.batchSize(), settings.slots()), lease);
        }
    }

    /** The device side: one input and one output buffer per slot, a float per record each way. */
    static final class SquareBackend implements BatchBackend {
        private final GpuInfo gpu;
        private final int batchSize;
        private final ByteBuffer[] in;
        private final ByteBuffer[] out;
        private final int[] started;

        SquareBackend(GpuInfo gpu, int batchSize, int slots) {
            this.gpu = gpu;
            this.batchSize = batchSize;
            this.in = new ByteBuffer[slots];
            this.out = new ByteBuffer[slots];
            this.started = new int[slots];
            for (int s = 0; s < slots; s++) {
                in[s] = ByteBuffer.allocateDirect(batchSize * Float.BYTES).order(ByteOrder.nativeOrder());
                out[s] = ByteBuffer.allocateDirect(batchSize * Float.BYTES).order(ByteOrder.nativeOrder());
            }
        }

        @Override
        public int slots() {
            return in.length;
        }

        @Override
        public int batchSize() {
            return batchSize;
        }

        @Override
        public int inputRecordBytes() {
            return Float.BYTES;
        }

        @Override
        public int outputRecordBytes() {
            return Float.BYTES;
        }

        @Override
        public ByteBuffer input(int slot) {
            return in[slot];
        }

        @Override
        public ByteBuffer output(int slot) {
            return out[slot];
        }

        @Override
        public void start(int slot, int records) {
            // a device would queue the copy in, the kernel and the copy out here, and return
            for (int i = 0; i < records; i++) {
                float x = in[slot].getFloat(i * Float.BYTES);
                out[slot].putFloat(i * Float.BYTES, x * x);
            }
            started[slot] = records;
        }

        @Override
        public int finish(int slot) {
            // a device would wait here, bounded, for the slot's results; say how many were written
            int written = started[slot];
            started[slot] = 0;
            return written;
        }

        @Override
        public String describe() {
            return "squares on the CPU for GPU " + gpu.getUuid().orElse("#" + gpu.getIndex());
        }

        @Override
        public void close() {}
    }

    /** Record i is the float at byte i * 4 of the input; its result the float at byte i * 4 of the output. */
    static final class FloatCodec implements BatchCodec<Float, Float> {
        private static final long serialVersionUID = 1L;

        @Override
        public void encode(Float record, ByteBuffer input, int offset) {
            input.putFloat(offset, record);
        }

        @Override
        public Float decode(Float record, ByteBuffer output, int offset) {
            return output.getFloat(offset);
        }
    }
}
