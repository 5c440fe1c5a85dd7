package io.flinkdevices.samples.fpga;

import io.flinkdevices.samples.BatchingOperator;
import io.flinkdevices.sdk.info.DeviceSelection;
import io.flinkdevices.sdk.info.FpgaInfo;

import org.apache.flink.api.common.accumulators.ListAccumulator;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * FIR-filters every sensor's stream of samples, a batch at a time, with one OpenCL kernel run per
 * batch on the subtask's device. Apply it to a stream keyed by sensor ({@code keyBy(s ->
 * s.sensor)}), whose samples arrive in order per sensor.
 *
 * <p>Records are gathered until {@code batchSize} are in. Then the batch is marshalled into
 * direct, native-order buffers: one segment per sensor of the batch, holding the sensor's last
 * {@code taps - 1} samples from earlier batches followed by its samples of this batch, plus each
 * record's position in those segments. One kernel run computes every record's output, and the
 * filtered samples are emitted in arrival order (each input record carries its filtered value out). The history carried from batch to batch makes
 * the output equal to filtering each sensor's whole stream ({@link Fir#filter}); it is kept in
 * keyed state at checkpoints, so it survives a restore and a rescale.
 *
 * <p>A partial batch is flushed before a watermark is forwarded, before a checkpoint barrier, and
 * at the end of input. Timestamps are not kept.
 *
 * <p>The device: a fixed {@link FpgaInfo}, or the one {@link DeviceSelection#forSubtask} picks
 * from {@code getExternalResourceInfos(resourceName)}. It is opened by platform and device index
 * and both names are checked. The kernel is built from {@code fir.cl} or, given a bitstream, loaded
 * with {@code clCreateProgramWithBinary}; without one, a binary the driver loaded ({@link
 * FpgaInfo#getBitstream()} naming a file that is not {@code .cl}) is used. A device that cannot be opened fails the task with a
 * message naming it. When the TaskManager received no device, the subtask filters on the CPU and
 * says so.
 *
 * <p>Accumulators: {@code records-opencl} / {@code records-cpu}, {@code subtasks-opencl} / {@code
 * subtasks-cpu}, {@code batches}, {@code nanos-marshal} (reading the records, in chunks of {@value
 * #READ_CHUNK} as they arrive, and laying them out
 * in the direct buffers, history included, and copying the results out of the output buffer; each
 * result is stored into its record in the loop that emits it, which is not timed), {@code
 * nanos-kernel} (enqueued writes, kernel, read, wait), {@code nanos-cpu} (the CPU path's
 * filtering) and {@code devices} (one line per subtask).
 */
public final class FirBatchOperator extends BatchingOperator<SensorSample, SensorSample> {

    private static final long serialVersionUID = 1L;

    private static final Logger LOG = LoggerFactory.getLogger(FirBatchOperator.class);

    /**
     * On the OpenCL path, records are read into the batch's primitive arrays every this many
     * arrivals, while they are still in the CPU cache, not all at once when a large batch is full
     * (timed as marshalling either way).
     */
    static final int READ_CHUNK = 1024;

    static final ValueStateDescriptor<float[]> HISTORY =
            new ValueStateDescriptor<>("fir-history", PrimitiveArrayTypeInfo.FLOAT_PRIMITIVE_ARRAY_TYPE_INFO);

    private final String resourceName;
    private final FpgaInfo fixedDevice;
    private final String bitstream;
    private final String buildOptions;
    private final float[] taps;
    private final int batchSize;

    private transient OpenClFir fir;
    private transient SensorSample[] pending;
    /** The batch's sensors as indexes, in order of first arrival in the batch. */
    private transient int[] touched;
    private transient float[] values;
    private transient boolean resultsInValues;
    /**
     * Each record's sensor id as read; replaced by the sensor's index when the batch is laid out.
     * A sensor's index is its id for ids 0..{@link SlotMap#DENSE}-1 (the usual case: no lookup per
     * record) and {@code DENSE + k} for the k-th other id seen.
     */
    private transient int[] ids;
    /** Records of the batch per sensor index; 0 for sensors not in the batch. */
    private transient int[] counts;
    /** Per sensor index: where its next sample goes in the layout. */
    private transient int[] cursors;
    /** Per sensor index: its slot, once it has been in a batch. */
    private transient Slot[] slotsByIndex;
    /** Indexes handed out to ids outside 0..DENSE-1. */
    private transient int otherIds;
    private transient float[] stageIn;
    private transient int[] stagePos;
    private transient int count;
    /** Records of the batch already read into {@code ids}/{@code values}. */
    private transient int marshalled;
    private transient SlotMap slots;
    private transient ValueState<float[]> historyState;
    private transient boolean restored;
    private transient StreamRecord<SensorSample> reuse;
    private transient LongCounter records;
    private transient LongCounter batches;
    private transient LongCounter nanosMarshal;
    private transient LongCounter nanosKernel;
    private transient LongCounter nanosCpu;

    private FirBatchOperator(
            String resourceName, FpgaInfo fixedDevice, String bitstream, String buildOptions, float[] taps, int batchSize) {
        if (batchSize <= 0) {
            throw new IllegalArgumentException("batch size must be > 0 but is " + batchSize);
        }
        if (taps.length == 0) {
            throw new IllegalArgumentException("a FIR filter needs at least 1 tap");
        }
        this.resourceName = resourceName;
        this.fixedDevice = fixedDevice;
        this.bitstream = bitstream;
        this.buildOptions = buildOptions;
        this.taps = taps.clone();
        this.batchSize = batchSize;
    }

    /**
     * Filters on the device {@link DeviceSelection} picks for the subtask from {@code
     * getExternalResourceInfos(resourceName)}.
     *
     * @param bitstream path of a device binary on the TaskManager host, or null to build {@code
     *     fir.cl} from source
     */
    public static FirBatchOperator onResource(String resourceName, float[] taps, int batchSize, String bitstream) {
        return new FirBatchOperator(resourceName, null, bitstream, null, taps, batchSize);
    }

    /** Filters on {@code device} in every subtask, without an external resource (local runs). */
    public static FirBatchOperator onDevice(FpgaInfo device, float[] taps, int batchSize, String bitstream) {
        return new FirBatchOperator(null, device, bitstream, null, taps, batchSize);
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        if (getKeyedStateBackend() == null) {
            throw new IllegalStateException(
                    "FirBatchOperator keeps each sensor's history in keyed state: apply it after keyBy(s -> s.sensor)");
        }
        historyState = context.getKeyedStateStore().getState(HISTORY);
        restored = context.isRestored();
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public void open() throws Exception {
        super.open();
        int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        slots = new SlotMap();
        if (restored) {
            ((KeyedStateBackend) getKeyedStateBackend())
                    .applyToAllKeys(
                            VoidNamespace.INSTANCE,
                            VoidNamespaceSerializer.INSTANCE,
                            HISTORY,
                            (key, state) -> {
                                float[] h = ((ValueState<float[]>) state).value();
                                if (h != null && h.length == taps.length - 1) {
                                    slots.put(new Slot((Integer) key, h.clone()));
                                }
                            });
        }
        FpgaInfo device = fixedDevice;
        String cpuReason = null;
        if (device == null) {
            device =
                    DeviceSelection.forSubtask(
                                    getRuntimeContext().getExternalResourceInfos(resourceName), subtask, FpgaInfo::from)
                            .orElse(null);
            if (device == null) {
                cpuReason = "the TaskManager received no '" + resourceName + "' device";
            }
        }
        String line;
        if (device != null) {
            String binary = bitstream != null ? bitstream : driverBitstream(device);
            fir = OpenClFir.open(device, taps, batchSize, binary == null ? null : Path.of(binary), buildOptions);
            line =
                    "FirJob subtask "
                            + subtask
                            + ": "
                            + fir.describe()
                            + (binary == null ? ", kernel built from " + OpenClFir.SOURCE_RESOURCE : ", bitstream " + binary)
                            + "; batches of "
                            + batchSize
                            + " samples, "
                            + taps.length
                            + " taps";
        } else {
            line = "FirJob subtask " + subtask + ": CPU path, because " + cpuReason;
        }
        // reported once, through the "devices" accumulator (FirJob.Result prints it); the log keeps it too
        LOG.info(line);
        String path = fir != null ? "opencl" : "cpu";
        ListAccumulator<String> devices = new ListAccumulator<>();
        devices.add(line);
        getRuntimeContext().addAccumulator("devices", devices);
        records = getRuntimeContext().getLongCounter("records-" + path);
        getRuntimeContext().getLongCounter("subtasks-" + path).add(1);
        batches = getRuntimeContext().getLongCounter("batches");
        nanosMarshal = getRuntimeContext().getLongCounter("nanos-marshal");
        nanosKernel = getRuntimeContext().getLongCounter("nanos-kernel");
        nanosCpu = getRuntimeContext().getLongCounter("nanos-cpu");
        pending = new SensorSample[batchSize];
        touched = new int[batchSize];
        values = new float[batchSize];
        ids = new int[batchSize];
        counts = new int[16];
        cursors = new int[16];
        slotsByIndex = new Slot[16];
        otherIds = 0;
        stageIn = new float[batchSize * taps.length];
        stagePos = new int[batchSize];
        reuse = new StreamRecord<>(null);
        count = 0;
        marshalled = 0;
    }

    @Override
    public void processElement(StreamRecord<SensorSample> element) {
        pending[count++] = element.getValue();
        if (count == batchSize) {
            flush();
        } else if (fir != null && count - marshalled == READ_CHUNK) {
            long t0 = System.nanoTime();
            readRecords();
            nanosMarshal.add(System.nanoTime() - t0);
        }
    }

    /**
     * Reads the records not read yet into primitive arrays: the sensor id and the value, nothing
     * else. A lookup that depends on a value just read from a record (the sensor's slot or
     * ordinal) made this loop several times slower (about 3 ns instead of 0.6 ns per record in a
     * stand-alone measurement); the sensor ids are counted later, in a loop over the primitive
     * arrays.
     */
    private void readRecords() {
        SensorSample[] pending = this.pending;
        int[] ids = this.ids;
        float[] values = this.values;
        for (int i = marshalled, n = count; i < n; i++) {
            SensorSample r = pending[i];
            ids[i] = r.sensor;
            values[i] = r.value;
        }
        marshalled = count;
    }

    /**
     * The index of a sensor id that is not a valid index yet: an id in 0..DENSE-1 beyond the
     * arrays (they grow), or any other id (it gets {@code DENSE + k} once, through its slot).
     */
    private int index(int sensor) {
        int index;
        if (sensor >= 0 && sensor < SlotMap.DENSE) {
            index = sensor;
        } else {
            Slot s = slot(sensor);
            if (s.index < 0) {
                s.index = SlotMap.DENSE + otherIds++;
            }
            index = s.index;
        }
        if (index >= counts.length) {
            int size = Math.max(index + 1, counts.length * 2);
            counts = Arrays.copyOf(counts, size);
            cursors = Arrays.copyOf(cursors, size);
            slotsByIndex = Arrays.copyOf(slotsByIndex, size);
        }
        if (index >= SlotMap.DENSE) {
            slotsByIndex[index] = slot(sensor);
        }
        return index;
    }

    /**
     * The binary the driver loaded on the device ({@code program.path}, given to job code as the
     * info's bitstream), when it is a file and not OpenCL C source; it must hold the kernel {@code
     * fir}.
     */
    private static String driverBitstream(FpgaInfo device) {
        return device.getBitstream()
                .filter(b -> !b.endsWith(".cl") && Files.isRegularFile(Path.of(b)))
                .orElse(null);
    }

    @Override
    protected void flush() {
        if (count == 0) {
            return;
        }
        if (fir != null) {
            flushOpenCl();
        } else {
            flushCpu();
        }
        records.add(count);
        batches.add(1);
        for (int i = 0; i < count; i++) {
            SensorSample r = pending[i];
            if (resultsInValues) {
                // The input record carries its result out (Flink's network input deserializes
                // every record into a fresh object, so nobody else holds it). Written here, where
                // emitting touches the record anyway, not in a pass of its own.
                r.value = values[i];
            }
            output.collect(reuse.replace(r));
            pending[i] = null;
        }
        resultsInValues = false;
        count = 0;
    }

    private void flushOpenCl() {
        int h = taps.length - 1;
        long t0 = System.nanoTime();
        // Records are read once, into primitive arrays (most of them already, in chunks, as they
        // arrived); sensors are counted by id, the layout is built in heap arrays and copied into
        // the direct buffers in bulk, several times faster than one buffer access per value.
        readRecords();
        int n = count;
        int[] ids = this.ids;
        int[] counts = this.counts;
        int[] touched = this.touched;
        int sensors = 0;
        // Sensor ids are indexes into counts/cursors directly (no lookup per record); an id that
        // is not one yet takes the slow path once per record.
        int limit = Math.min(counts.length, SlotMap.DENSE);
        for (int i = 0; i < n; i++) {
            int id = ids[i];
            if (id < 0 || id >= limit) {
                id = index(id);
                ids[i] = id;
                counts = this.counts;
                limit = Math.min(counts.length, SlotMap.DENSE);
            }
            if (counts[id]++ == 0) {
                touched[sensors++] = id;
            }
        }
        int[] cursors = this.cursors;
        Slot[] slotsByIndex = this.slotsByIndex;
        float[] stageIn = this.stageIn;
        int length = 0;
        for (int t = 0; t < sensors; t++) {
            int id = touched[t];
            Slot s = slotsByIndex[id];
            if (s == null) {
                s = slot(id); // an id in 0..DENSE-1: its index is the id
                slotsByIndex[id] = s;
            }
            System.arraycopy(s.history, 0, stageIn, length, h);
            cursors[id] = length + h;
            length += h + counts[id];
        }
        float[] values = this.values;
        int[] stagePos = this.stagePos;
        for (int i = 0; i < n; i++) {
            int p = cursors[ids[i]]++;
            stageIn[p] = values[i];
            stagePos[i] = p;
        }
        fir.input().put(0, stageIn, 0, length);
        fir.positions().put(0, stagePos, 0, count);
        long t1 = System.nanoTime();
        fir.run(count, length);
        long t2 = System.nanoTime();
        for (int t = 0; t < sensors; t++) {
            int id = touched[t];
            Slot s = slotsByIndex[id];
            // the segment's last h samples: the history the sensor's next batch starts from
            System.arraycopy(stageIn, cursors[id] - h, s.history, 0, h);
            s.dirty = true;
            counts[id] = 0;
        }
        marshalled = 0;
        fir.output().get(0, values, 0, count);
        resultsInValues = true;
        long t3 = System.nanoTime();
        nanosMarshal.add((t1 - t0) + (t3 - t2));
        nanosKernel.add(t2 - t1);
    }

    private void flushCpu() {
        long t0 = System.nanoTime();
        for (int i = 0; i < count; i++) {
            SensorSample r = pending[i];
            Slot s = slot(r.sensor);
            r.value = s.push(taps, r.value);
            s.dirty = true;
        }
        nanosCpu.add(System.nanoTime() - t0);
    }

    private Slot slot(int sensor) {
        Slot s = slots.get(sensor);
        if (s == null) {
            s = new Slot(sensor, new float[taps.length - 1]);
            slots.put(s);
        }
        return s;
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        for (Slot s : slots.all()) {
            if (s.dirty) {
                setCurrentKey(s.sensor);
                historyState.update(s.history.clone());
                s.dirty = false;
            }
        }
    }

    @Override
    protected void closeDevice() {
        if (fir != null) {
            fir.close();
            fir = null;
        }
    }

    int batchSize() {
        return batchSize;
    }

    @Override
    public String toString() {
        return "FirBatchOperator{" + taps.length + " taps, batch " + batchSize + "}";
    }

    /** One sensor: the samples the next batch starts from, and this batch's bookkeeping. */
    static final class Slot {
        final int sensor;
        final float[] history;
        /** For an id outside 0..DENSE-1: its index in the OpenCL path's arrays, -1 until it has one. */
        int index = -1;
        boolean dirty;

        Slot(int sensor, float[] history) {
            this.sensor = sensor;
            this.history = history;
        }

        /** The CPU path: filters one sample and shifts it into the history. */
        float push(float[] taps, float x) {
            float y = Fir.output(taps, history, x);
            int h = history.length;
            if (h > 0) {
                System.arraycopy(history, 1, history, 0, h - 1);
                history[h - 1] = x;
            }
            return y;
        }
    }

    /** Sensor id to slot, open addressing on ints: no boxing per record. */
    static final class SlotMap {
        private Slot[] table = new Slot[64];
        private int size;

        /** Sensors 0..DENSE-1, the usual case, are found by index. */
        static final int DENSE = 1 << 16;

        private Slot[] dense = new Slot[16];

        Slot get(int sensor) {
            if (sensor >= 0 && sensor < dense.length) {
                return dense[sensor];
            }
            if (sensor >= 0 && sensor < DENSE) {
                return null; // dense sensors are always in the dense array
            }
            int mask = table.length - 1;
            for (int i = mix(sensor) & mask; ; i = (i + 1) & mask) {
                Slot s = table[i];
                if (s == null || s.sensor == sensor) {
                    return s;
                }
            }
        }

        void put(Slot slot) {
            int sensor = slot.sensor;
            if (sensor >= 0 && sensor < DENSE) {
                if (sensor >= dense.length) {
                    dense = Arrays.copyOf(dense, Math.min(DENSE, Math.max(dense.length * 2, Integer.highestOneBit(sensor) * 2)));
                }
                if (dense[sensor] == null) {
                    size++;
                }
                dense[sensor] = slot;
                return;
            }
            if ((size + 1) * 2 > table.length) {
                Slot[] old = table;
                table = new Slot[old.length * 2];
                for (Slot s : old) {
                    if (s != null) {
                        insert(s);
                    }
                }
            }
            if (insert(slot)) {
                size++;
            }
        }

        /** Returns true when the sensor was new. */
        private boolean insert(Slot slot) {
            int mask = table.length - 1;
            for (int i = mix(slot.sensor) & mask; ; i = (i + 1) & mask) {
                if (table[i] == null || table[i].sensor == slot.sensor) {
                    boolean added = table[i] == null;
                    table[i] = slot;
                    return added;
                }
            }
        }

        List<Slot> all() {
            List<Slot> out = new ArrayList<>(size);
            for (Slot s : dense) {
                if (s != null) {
                    out.add(s);
                }
            }
            for (Slot s : table) {
                if (s != null) {
                    out.add(s);
                }
            }
            return out;
        }

        private static int mix(int x) {
            int h = x * 0x9E3779B9;
            return h ^ (h >>> 16);
        }

        @Override
        public String toString() {
            return "SlotMap" + Arrays.toString(all().stream().mapToInt(s -> s.sensor).toArray());
        }
    }
}
