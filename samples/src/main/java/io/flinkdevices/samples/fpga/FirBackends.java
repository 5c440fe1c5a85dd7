package io.flinkdevices.samples.fpga;

import io.flinkdevices.job.DeviceLease;
import io.flinkdevices.job.batch.BatchBackend;
import io.flinkdevices.job.batch.LeasedBatchBackend;
import io.flinkdevices.job.batch.ForwardingBatchBackend;
import io.flinkdevices.job.batch.BatchBackendFactory;
import io.flinkdevices.job.batch.BatchSettings;
import io.flinkdevices.sdk.info.FpgaInfo;

import org.apache.flink.api.common.accumulators.ListAccumulator;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.RuntimeContext;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Optional;


/**
 * Opens a FIR subtask's backend: {@link OpenClFirBatchBackend} on the device {@link FirDevice}
 * picks, or {@link CpuFirBatchBackend} when the TaskManager received none (a device that cannot be
 * opened fails the task with a message naming it). Registers the job's accumulators: {@code
 * records-opencl|cpu}, {@code subtasks-opencl|cpu}, {@code batches}, {@code nanos-kernel}
 * (starting batches and waiting for them) or {@code nanos-cpu} (the CPU path's filtering), {@code
 * nanos-marshal} (through the codec: copying blocks in, laying batches out, copying results out)
 * and {@code devices} (one line per subtask).
 *
 * <p>It holds the operator's {@link FirCodec} to hand it its accumulator: both are fields of the
 * same operator, serialized in one stream, so they stay one object in the subtask.
 */
final class FirBackends implements BatchBackendFactory {

    private static final long serialVersionUID = 1L;

    private static final Logger LOG = LoggerFactory.getLogger(FirBackends.class);

    private final FirDevice device;
    private final FirBatchArgs args;
    private final FirCodec codec;

    FirBackends(FirDevice device, FirBatchArgs args, FirCodec codec) {
        this.device = device;
        this.args = args;
        this.codec = codec;
    }

    @Override
    public BatchBackend open(BatchSettings settings, RuntimeContext context) throws Exception {
        int subtask = context.getTaskInfo().getIndexOfThisSubtask();
        float[] taps = codec.taps();
        Optional<DeviceLease> lease = device.lease(context);
        try {
            return open(settings, context, subtask, taps, lease);
        } catch (Exception | Error e) {
            lease.ifPresent(DeviceLease::close);
            throw e;
        }
    }

    private BatchBackend open(BatchSettings settings, RuntimeContext context, int subtask, float[] taps,
            Optional<DeviceLease> lease) throws Exception {
        FpgaInfo info = lease.map(l -> l.first(FpgaInfo::from)).or(device::fixed).orElse(null);
        BatchBackend backend;
        String line;
        String path;
        if (info != null) {
            OpenClFirBatchBackend opencl = device.open(info, taps, args);
            backend = opencl;
            path = "opencl";
            line = "FirJob subtask " + subtask + ": " + opencl.device() + ", " + device.programOf(info) + "; "
                    + opencl.batching() + ", " + taps.length + " taps";
        } else {
            backend = new CpuFirBatchBackend(taps, args.batchSize(), device.noDeviceReason());
            path = "cpu";
            line = "FirJob subtask " + subtask + ": " + backend.describe();
        }
        // reported once, through the "devices" accumulator (FirJobResult prints it); the log keeps it too
        LOG.info(line);
        ListAccumulator<String> devices = new ListAccumulator<>();
        devices.add(line);
        context.addAccumulator("devices", devices);
        context.getLongCounter("subtasks-" + path).add(1);
        codec.measure(context.getLongCounter("nanos-marshal"));
        BatchBackend counted = new Counted(
                backend,
                context.getLongCounter("records-" + path),
                context.getLongCounter("batches"),
                context.getLongCounter(info != null ? "nanos-kernel" : "nanos-cpu"));
        return lease.isPresent() ? new LeasedBatchBackend(counted, lease.get()) : counted;
    }

    /** A backend whose batches, samples and time in {@code start} and {@code finish} are counted. */
    private static final class Counted extends ForwardingBatchBackend {
        private final LongCounter records;
        private final LongCounter batches;
        private final LongCounter nanos;
        private final int[] started;

        Counted(BatchBackend backend, LongCounter records, LongCounter batches, LongCounter nanos) {
            super(backend);
            this.records = records;
            this.batches = batches;
            this.nanos = nanos;
            this.started = new int[backend.slots()];
        }

        @Override
        public void start(int slot, int n) throws Exception {
            long t0 = System.nanoTime();
            super.start(slot, n);
            nanos.add(System.nanoTime() - t0);
            started[slot] = n;
        }

        @Override
        public int finish(int slot) throws Exception {
            long t0 = System.nanoTime();
            int written = super.finish(slot);
            nanos.add(System.nanoTime() - t0);
            records.add(started[slot]);
            batches.add(1);
            return written;
        }
    }
}
