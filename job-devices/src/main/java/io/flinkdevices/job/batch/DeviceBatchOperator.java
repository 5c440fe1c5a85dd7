package io.flinkdevices.job.batch;

import io.flinkdevices.job.DeviceHealthGuard;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A one-input operator that sends its records through a device in batches, several batches in
 * flight, and emits one result per record in input order.
 *
 * <pre>{@code
 * DataStream<Product> products = vectors.transform(
 *         "matrix x vector", TypeInformation.of(Product.class),
 *         new DeviceBatchOperator<>(BatchSettings.of(4096, 3), myBackendFactory, myCodec));
 * }</pre>
 *
 * <p>At open the subtask opens its backend with the {@link BatchBackendFactory} and logs {@link
 * BatchBackend#describe()}. Records are encoded with the {@link BatchCodec} into the filling slot;
 * a full slot is started and a {@link Batcher} keeps up to {@link BatchBackend#slots()} batches in
 * flight. Everything pending is started, finished and emitted:
 *
 * <ul>
 *   <li>when the oldest pending record has waited {@link BatchSettings#timeout()} (a processing-time
 *       timer), so a slow stream still moves;
 *   <li>before a checkpoint barrier ({@link #prepareSnapshotPreBarrier}), so no record is held
 *       across a checkpoint: the operator keeps no records in its state, and after a restore the
 *       source replays exactly the records whose results were not emitted before the checkpoint;
 *   <li>before a watermark is forwarded, so results never fall behind it;
 *   <li>at the end of input.
 * </ul>
 *
 * <p>A codec that is a {@link StatefulBatchCodec} has its state checkpointed as union operator
 * state named {@value #STATE_NAME} and handed back in {@link StatefulBatchCodec#restoreState}
 * before the first record (consistent with the emitted results, since every batch is emitted
 * before the snapshot). Any other codec leaves the operator stateless.
 *
 * <p>Results keep their input record's timestamp. A device error in {@code start} or {@code
 * finish} fails the task with a {@link BatchFailedException} carrying the backend's message, and
 * Flink's restart strategy takes over; so does a backend that breaks its contract: a {@code
 * finish} that reports fewer results than the batch's records, a buffer it shrank.
 *
 * <p>The backend lives on a thread of its own: it is opened, started, finished and closed there,
 * and the task thread waits for each call at most {@link BatchSettings#backendTimeout()}. A call
 * past it fails the task with a {@link BatchFailedException} saying which call of which batch did
 * not return, so a stuck device never holds the task thread, nor the job's checkpoints, without
 * bound; the stuck call keeps its thread and the backend is closed there if it ever returns. {@code
 * start} is handed over without waiting (a failure or overrun of it fails the next {@code finish}),
 * so a batch costs one hand-over and back; a backend that works in {@code start} works beside the
 * task's filling of the next batch. The backend is closed once, when the operator closes.
 * Metrics: {@link BatchMetrics}, in the operator's metric group.
 *
 * <p>{@link #guardedBy(String)} makes the operator check the health of the subtask's devices once
 * per batch instead of a job author's check per record: a device that fails under {@code
 * health.action: fail-tasks} fails the task with a {@code DeviceFailedException} naming it.
 *
 * @param <IN> the records in
 * @param <OUT> the records out
 */
@PublicEvolving
public class DeviceBatchOperator<IN, OUT> extends AbstractStreamOperator<OUT>
        implements OneInputStreamOperator<IN, OUT>, BoundedOneInput {

    private static final long serialVersionUID = 1L;

    private static final Logger LOG = LoggerFactory.getLogger(DeviceBatchOperator.class);

    /** The name of the union list state a {@link StatefulBatchCodec}'s entries are kept in. */
    public static final String STATE_NAME = "device-batch-codec-state";

    private final BatchSettings settings;
    private final BatchBackendFactory backends;
    private final BatchCodec<IN, OUT> codec;

    private String guardedResource;

    private transient Batcher<IN, OUT> batcher;
    private transient StreamRecord<OUT> reuse;
    private transient boolean timerSet;
    private transient ListState<Object> codecState;
    private transient DeviceHealthGuard guard;
    private transient int recordsUntilCheck;
    private transient int recordsPerCheck;

    /**
     * @param settings batch size, slots and flush timeout
     * @param backends opens the subtask's backend at open time
     * @param codec writes records into batches and reads results out
     */
    public DeviceBatchOperator(BatchSettings settings, BatchBackendFactory backends, BatchCodec<IN, OUT> codec) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.backends = Objects.requireNonNull(backends, "backends");
        this.codec = Objects.requireNonNull(codec, "codec");
    }

    /**
     * Checks the health of the subtask's devices of external resource {@code resourceName} (a
     * {@link DeviceHealthGuard} made at open) at the first record and then once every batch size
     * of records, before the record enters its batch: one check per batch, about 80 ns, where a
     * per-record check would cost that per record. Call it before the operator is added to the job.
     *
     * @return this operator
     */
    public DeviceBatchOperator<IN, OUT> guardedBy(String resourceName) {
        this.guardedResource = Objects.requireNonNull(resourceName, "resourceName");
        return this;
    }

    /** The settings the operator was made with. */
    public BatchSettings settings() {
        return settings;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        if (codec instanceof StatefulBatchCodec) {
            StatefulBatchCodec<IN, OUT, Object> stateful = (StatefulBatchCodec<IN, OUT, Object>) codec;
            TypeInformation<Object> type = stateful.stateType();
            codecState = context.getOperatorStateStore().getUnionListState(new ListStateDescriptor<>(STATE_NAME, type));
            stateful.restoreState(context.isRestored() ? codecState.get() : List.of());
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        if (codecState != null) {
            codecState.update(((StatefulBatchCodec<IN, OUT, Object>) codec).snapshotState());
        }
    }

    @Override
    public void open() throws Exception {
        super.open();
        int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        BackendThread thread = BackendThread.start("device-batch " + getOperatorConfig().getOperatorName() + " ("
                        + (subtask + 1) + "/" + getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks() + ")",
                settings.backendTimeout().toNanos(), settings.slots() + 2);
        String opener = backends.getClass().getName() + ".open";
        BatchBackend opened;
        try {
            opened = thread.call(opener, () -> backends.open(settings, getRuntimeContext()));
            if (opened == null) {
                throw new IllegalStateException(opener + " returned no backend (null)");
            }
        } catch (Exception e) {
            String notYet = thread.close(last -> {
                if (last instanceof BatchBackend) {
                    ((BatchBackend) last).close();
                }
            });
            if (notYet != null) {
                LOG.warn("{} subtask {}: the backend is not closed yet: {}", getOperatorName(), subtask, notYet);
            }
            throw e;
        }
        BatchBackend backend = new DeadlineBackend(opened, thread);
        try {
            reuse = new StreamRecord<>(null);
            batcher = new Batcher<>(backend, codec, this::emit, BatchMetrics.register(getMetricGroup()));
            guard = guardedResource == null ? null : DeviceHealthGuard.of(getRuntimeContext(), guardedResource);
            recordsPerCheck = backend.batchSize();
        } catch (RuntimeException e) {
            backend.close();
            throw e;
        }
        LOG.info("{} subtask {}: {}, {} batches of up to {} records in flight, flushed after {} ms, backend calls"
                        + " bounded by {} ms on thread '{}'", getOperatorName(), subtask, backend.describe(),
                backend.slots(), backend.batchSize(), settings.timeoutMillis(), settings.backendTimeout().toMillis(),
                thread.name());
    }

    /** The backend's {@link BatchBackend#describe()}, once open. */
    protected final String describeBackend() {
        return batcher == null ? "not open" : batcher.describe();
    }

    @Override
    public void processElement(StreamRecord<IN> element) throws Exception {
        if (guard != null && --recordsUntilCheck <= 0) {
            guard.check();
            recordsUntilCheck = recordsPerCheck;
        }
        batcher.add(element.getValue(), element.hasTimestamp() ? element.getTimestamp() : Batcher.NO_TIMESTAMP);
        if (!timerSet) {
            armTimer(settings.timeoutMillis());
        }
    }

    private void emit(OUT result, long timestamp) {
        if (timestamp == Batcher.NO_TIMESTAMP) {
            reuse.replace(result);
            reuse.eraseTimestamp();
        } else {
            reuse.replace(result, timestamp);
        }
        output.collect(reuse);
    }

    private void armTimer(long delayMillis) {
        timerSet = true;
        long at = getProcessingTimeService().getCurrentProcessingTime() + Math.max(1, delayMillis);
        getProcessingTimeService().registerTimer(at, t -> onTimer());
    }

    /** Flushes when the oldest pending record has waited the timeout; else waits for it to. */
    private void onTimer() throws Exception {
        timerSet = false;
        if (batcher == null) {
            return;
        }
        long oldest = batcher.oldestPendingNanos();
        if (oldest < 0) {
            return;
        }
        long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - oldest);
        if (waitedMillis >= settings.timeoutMillis()) {
            batcher.drain();
        } else {
            armTimer(settings.timeoutMillis() - waitedMillis);
        }
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        batcher.drain();
        super.processWatermark(mark);
    }

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        batcher.drain();
        super.prepareSnapshotPreBarrier(checkpointId);
    }

    @Override
    public void endInput() throws Exception {
        batcher.drain();
    }

    @Override
    public void close() throws Exception {
        try {
            if (batcher != null) {
                batcher.close();
                batcher = null;
            }
        } finally {
            super.close();
        }
    }
}
