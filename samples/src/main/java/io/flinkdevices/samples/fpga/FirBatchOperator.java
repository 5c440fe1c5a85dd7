package io.flinkdevices.samples.fpga;

import io.flinkdevices.samples.BatchingOperator;
import io.flinkdevices.sdk.info.FpgaInfo;

import org.apache.flink.api.common.accumulators.ListAccumulator;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * FIR-filters blocks of sensor samples ({@link SampleBlock}) on the subtask's OpenCL device, with
 * several batches in flight ({@link OpenClFirBatchBackend}). Chain it to a source whose subtasks
 * each own whole sensors, in order ({@link SensorBlocks}): no shuffle and no serializer between
 * them.
 *
 * <p>Samples are copied from the blocks into the filling slot's heap arrays until {@code
 * batchSize} are in; then the batch is laid out in the slot's direct buffer ({@link FirLayout}),
 * the device is started on it, and the next slot fills while the device works. When every slot is
 * in flight, the oldest is finished and its batch emitted as one block, so blocks leave in the
 * order their samples came in. The history carried from batch to batch makes the output equal to
 * filtering each sensor's whole stream ({@link Fir#filter}); it is kept in union operator state,
 * so it survives a restore and a rescale (every subtask restores every sensor's history, and of
 * two copies the one that has seen more samples wins).
 *
 * <p>Every batch is flushed and finished before a watermark is forwarded, before a checkpoint
 * barrier, and at the end of input: no sample is held across a checkpoint. The emitted block and
 * its arrays are reused once the slot is refilled: downstream must not keep it (with object reuse
 * off, Flink copies it for chained operators).
 *
 * <p>The device comes from {@link FirDevice}. A device that cannot be opened fails the task with a
 * message naming it; when the TaskManager received no device, the subtask filters on the CPU, one
 * block at a time, and says so.
 *
 * <p>Accumulators: {@code records-opencl} / {@code records-cpu}, {@code subtasks-opencl} / {@code
 * subtasks-cpu}, {@code batches}, {@code nanos-marshal} (copying samples in, laying batches out,
 * copying results out), {@code nanos-kernel} (starting batches and waiting for them), {@code
 * nanos-cpu} (the CPU path's filtering) and {@code devices} (one line per subtask).
 */
public final class FirBatchOperator extends BatchingOperator<SampleBlock, SampleBlock> {

    private static final long serialVersionUID = 1L;

    private static final Logger LOG = LoggerFactory.getLogger(FirBatchOperator.class);

    static final ListStateDescriptor<SensorHistory> HISTORY = new ListStateDescriptor<>("fir-history", SensorHistory.class);

    private final FirDevice device;
    private final float[] taps;
    private final FirBatchArgs args;

    private transient OpenClFirBatchBackend backend;
    private transient SensorHistories histories;
    private transient ListState<SensorHistory> historyState;
    private transient FirLayout layout;
    private transient SampleBlock[] slotBlocks;
    /** The slot being filled, and the oldest slot in flight. */
    private transient int filling;
    private transient int oldest;
    private transient int inFlight;
    private transient StreamRecord<SampleBlock> reuse;
    private transient LongCounter records;
    private transient LongCounter batches;
    private transient LongCounter nanosMarshal;
    private transient LongCounter nanosKernel;
    private transient LongCounter nanosCpu;

    private FirBatchOperator(FirDevice device, float[] taps, FirBatchArgs args) {
        if (taps.length == 0) {
            throw new IllegalArgumentException("a FIR filter needs at least 1 tap");
        }
        this.device = device;
        this.taps = taps.clone();
        this.args = args;
    }

    /**
     * Filters on the device {@link io.flinkdevices.sdk.info.DeviceSelection} picks for the
     * subtask from {@code getExternalResourceInfos(resourceName)}.
     *
     * @param bitstream path of a device binary on the TaskManager host, or null to build {@code
     *     fir.cl} from source
     */
    public static FirBatchOperator onResource(String resourceName, float[] taps, FirBatchArgs args, String bitstream) {
        return new FirBatchOperator(FirDevice.onResource(resourceName, bitstream), taps, args);
    }

    /** Filters on {@code device} in every subtask, without an external resource (local runs). */
    public static FirBatchOperator onDevice(FpgaInfo device, float[] taps, FirBatchArgs args, String bitstream) {
        return new FirBatchOperator(FirDevice.fixed(device, bitstream), taps, args);
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        historyState = context.getOperatorStateStore().getUnionListState(HISTORY);
        histories = new SensorHistories(taps.length - 1);
        if (context.isRestored()) {
            for (SensorHistory h : historyState.get()) {
                histories.restore(h);
            }
        }
    }

    @Override
    public void open() throws Exception {
        super.open();
        int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        FpgaInfo info = device.pick(getRuntimeContext()).orElse(null);
        String line;
        if (info != null) {
            backend = device.open(info, taps, args);
            line =
                    "FirJob subtask "
                            + subtask
                            + ": "
                            + backend.device()
                            + ", "
                            + device.programOf(info)
                            + "; "
                            + backend.batching()
                            + ", "
                            + taps.length
                            + " taps";
            layout = new FirLayout(taps.length, args.batchSize(), histories);
            slotBlocks = new SampleBlock[backend.slots()];
            for (int i = 0; i < slotBlocks.length; i++) {
                slotBlocks[i] = new SampleBlock(args.batchSize());
            }
        } else {
            line = "FirJob subtask " + subtask + ": CPU path, because " + device.noDeviceReason();
        }
        // reported once, through the "devices" accumulator (FirJobResult prints it); the log keeps it too
        LOG.info(line);
        String path = backend != null ? "opencl" : "cpu";
        ListAccumulator<String> devices = new ListAccumulator<>();
        devices.add(line);
        getRuntimeContext().addAccumulator("devices", devices);
        records = getRuntimeContext().getLongCounter("records-" + path);
        getRuntimeContext().getLongCounter("subtasks-" + path).add(1);
        batches = getRuntimeContext().getLongCounter("batches");
        nanosMarshal = getRuntimeContext().getLongCounter("nanos-marshal");
        nanosKernel = getRuntimeContext().getLongCounter("nanos-kernel");
        nanosCpu = getRuntimeContext().getLongCounter("nanos-cpu");
        reuse = new StreamRecord<>(null);
    }

    @Override
    public void processElement(StreamRecord<SampleBlock> element) throws Exception {
        SampleBlock in = element.getValue();
        if (backend == null) {
            filterOnCpu(in);
            return;
        }
        int batch = args.batchSize();
        for (int from = 0; from < in.count; ) {
            long t0 = System.nanoTime();
            SampleBlock slot = slotBlocks[filling];
            int n = Math.min(in.count - from, batch - slot.count);
            System.arraycopy(in.sensors, from, slot.sensors, slot.count, n);
            System.arraycopy(in.seqs, from, slot.seqs, slot.count, n);
            System.arraycopy(in.values, from, slot.values, slot.count, n);
            slot.count += n;
            from += n;
            nanosMarshal.add(System.nanoTime() - t0);
            if (slot.count == batch) {
                dispatch();
            }
        }
    }

    /** The CPU path: filters the block in place and emits it. */
    private void filterOnCpu(SampleBlock in) {
        long t0 = System.nanoTime();
        for (int i = 0; i < in.count; i++) {
            in.values[i] = histories.of(in.sensors[i]).push(taps, in.values[i]);
        }
        nanosCpu.add(System.nanoTime() - t0);
        records.add(in.count);
        batches.add(1);
        output.collect(reuse.replace(in));
    }

    /** Lays out and starts the filling slot; finishes the oldest when every slot is in flight. */
    private void dispatch() throws InterruptedException {
        SampleBlock slot = slotBlocks[filling];
        long t0 = System.nanoTime();
        layout.layOut(slot.sensors, slot.values, slot.count, backend.input(filling), backend.samplesOffset());
        long t1 = System.nanoTime();
        backend.start(filling, slot.count);
        nanosKernel.add(System.nanoTime() - t1);
        nanosMarshal.add(t1 - t0);
        inFlight++;
        filling = (filling + 1) % slotBlocks.length;
        if (inFlight == slotBlocks.length) {
            completeOldest();
        }
    }

    /** Finishes the oldest slot in flight and emits its batch as one block. */
    private void completeOldest() throws InterruptedException {
        long t0 = System.nanoTime();
        backend.finish(oldest);
        long t1 = System.nanoTime();
        SampleBlock block = slotBlocks[oldest];
        backend.output(oldest).order(ByteOrder.nativeOrder()).asFloatBuffer().get(0, block.values, 0, block.count);
        nanosMarshal.add(System.nanoTime() - t1);
        nanosKernel.add(t1 - t0);
        records.add(block.count);
        batches.add(1);
        output.collect(reuse.replace(block));
        block.count = 0;
        inFlight--;
        oldest = (oldest + 1) % slotBlocks.length;
    }

    /** Starts the partial batch, if any, and finishes every batch in flight, oldest first. */
    @Override
    protected void flush() {
        if (backend == null) {
            return;
        }
        try {
            if (slotBlocks[filling].count > 0) {
                dispatch();
            }
            while (inFlight > 0) {
                completeOldest();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + backend.describe(), e);
        }
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        List<SensorHistory> copies = new ArrayList<>();
        for (SensorHistory h : histories.all()) {
            copies.add(h.copy());
        }
        historyState.update(copies);
    }

    @Override
    protected void closeDevice() {
        if (backend != null) {
            backend.close();
            backend = null;
        }
    }

    @Override
    public String toString() {
        return "FirBatchOperator{" + taps.length + " taps, " + args + "}";
    }
}
