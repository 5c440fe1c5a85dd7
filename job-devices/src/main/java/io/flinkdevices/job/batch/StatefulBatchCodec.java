package io.flinkdevices.job.batch;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.typeinfo.TypeInformation;

import java.util.List;

/**
 * A {@link BatchCodec} that keeps state from batch to batch, which {@link DeviceBatchOperator}
 * checkpoints and restores: the per-key state a device needs next to each batch (a filter's last
 * samples per sensor, a running total per account), usually added to the batch in {@link
 * #encodeBatch}.
 *
 * <p>Why the state is consistent: the operator starts, finishes and emits every pending batch in
 * {@code prepareSnapshotPreBarrier}, before {@link #snapshotState()} is called, so the snapshot
 * holds the state after exactly the records whose results were emitted before the barrier, and
 * after a restore the source replays exactly the others. Update the state when a batch is encoded
 * (it is input, not output): the next batch can then be encoded while this one is on the device.
 *
 * <p>The state is union operator state: after a restore, at any parallelism, every subtask
 * receives every subtask's entries in {@link #restoreState} and keeps those that belong to it (or,
 * where the same key may come from several subtasks' snapshots, the newest copy). Entries are
 * serialized with {@link #stateType()}; a Flink POJO keeps them readable when fields are added.
 *
 * <pre>{@code
 * final class Totals implements StatefulBatchCodec<Payment, Balance, KeyTotal> { ... }
 * stream.transform("balances", TypeInformation.of(Balance.class),
 *         new DeviceBatchOperator<>(settings, backends, new Totals()));
 * }</pre>
 *
 * @param <IN> the records in
 * @param <OUT> the records out
 * @param <S> one entry of the state (one key's)
 */
@PublicEvolving
public interface StatefulBatchCodec<IN, OUT, S> extends BatchCodec<IN, OUT> {

    /** The type of one state entry, for Flink's serializer. */
    TypeInformation<S> stateType();

    /**
     * Called once in every subtask before its first record: with every entry of the checkpoint it
     * is restored from (all subtasks' entries), or with none on a fresh start.
     */
    void restoreState(Iterable<S> entries) throws Exception;

    /**
     * The state to checkpoint, as entries the task does not change afterwards (copies, or
     * objects it replaces instead of updating); called after every pending batch was emitted.
     */
    List<S> snapshotState() throws Exception;
}
