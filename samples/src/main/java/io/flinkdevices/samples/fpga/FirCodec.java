package io.flinkdevices.samples.fpga;

import io.flinkdevices.job.batch.StatefulBatchCodec;

import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.typeinfo.TypeInformation;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * The FIR filter's side of {@link io.flinkdevices.job.batch.DeviceBatchOperator}: a {@link
 * SampleBlock} takes one row of the batch per sample; its samples are copied into heap staging
 * arrays ({@code encode}), the whole batch is laid out for the kernel once it is complete ({@code
 * encodeBatch}, {@link FirLayout}: one segment per sensor with its carried history in front), and
 * the filtered values are copied back into the block's {@code values} ({@code decode}), so the
 * block that went in comes out filtered.
 *
 * <p>The state is each sensor's {@link SensorHistory}, updated when a batch is laid out and
 * checkpointed as union operator state: every subtask restores every sensor's history, and of two
 * copies the one that has seen more samples wins, so a restore at another parallelism works too.
 *
 * <p>Time spent here (copying in, laying out, copying out) goes to the accumulator {@link
 * #measure} was given, if any.
 */
final class FirCodec implements StatefulBatchCodec<SampleBlock, SampleBlock, SensorHistory> {

    private static final long serialVersionUID = 1L;

    private final float[] taps;
    private final int batchSize;

    private transient SensorHistories histories;
    private transient FirLayout layout;
    private transient int[] sensors;
    private transient float[] values;
    private transient int staged;
    private transient LongCounter nanosMarshal;

    /** A codec for batches of {@code batchSize} samples, the backend's. */
    FirCodec(float[] taps, int batchSize) {
        if (taps.length == 0) {
            throw new IllegalArgumentException("a FIR filter needs at least 1 tap");
        }
        this.taps = taps.clone();
        this.batchSize = batchSize;
    }

    /** Adds the time spent marshalling to {@code counter} from now on. */
    void measure(LongCounter counter) {
        this.nanosMarshal = counter;
    }

    @Override
    public int rows(SampleBlock block) {
        return block.count;
    }

    @Override
    public void encode(SampleBlock block, ByteBuffer input, int offset) {
        long t0 = System.nanoTime();
        int n = block.count;
        System.arraycopy(block.sensors, 0, sensors, staged, n);
        System.arraycopy(block.values, 0, values, staged, n);
        staged += n;
        count(t0);
    }

    @Override
    public void encodeBatch(ByteBuffer input, int rows) {
        if (rows != staged) {
            throw new IllegalStateException("a batch of " + rows + " samples, but " + staged + " were encoded");
        }
        long t0 = System.nanoTime();
        layout.layOut(sensors, values, rows, input, samplesOffset(batchSize));
        staged = 0;
        count(t0);
    }

    @Override
    public SampleBlock decode(SampleBlock block, ByteBuffer output, int offset) {
        long t0 = System.nanoTime();
        output.duplicate().order(ByteOrder.nativeOrder()).asFloatBuffer().get(offset / Float.BYTES, block.values, 0, block.count);
        count(t0);
        return block;
    }

    private void count(long t0) {
        if (nanosMarshal != null) {
            nanosMarshal.add(System.nanoTime() - t0);
        }
    }

    @Override
    public TypeInformation<SensorHistory> stateType() {
        return TypeInformation.of(SensorHistory.class);
    }

    @Override
    public void restoreState(Iterable<SensorHistory> entries) {
        histories = new SensorHistories(taps.length - 1);
        for (SensorHistory h : entries) {
            histories.restore(h);
        }
        layout = new FirLayout(taps.length, batchSize, histories);
        sensors = new int[batchSize];
        values = new float[batchSize];
        staged = 0;
    }

    @Override
    public List<SensorHistory> snapshotState() {
        List<SensorHistory> copies = new ArrayList<>();
        for (SensorHistory h : histories.all()) {
            copies.add(h.copy());
        }
        return copies;
    }

    /**
     * Where the sample area starts in a slot's input buffer: after one int position per sample
     * ({@link OpenClFirBatchBackend#samplesOffset()} and {@link CpuFirBatchBackend} lay it out so).
     */
    static int samplesOffset(int batchSize) {
        return Math.multiplyExact(batchSize, Integer.BYTES);
    }

    /** Taps of the filter. */
    float[] taps() {
        return taps.clone();
    }
}
