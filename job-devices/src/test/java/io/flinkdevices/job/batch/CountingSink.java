package io.flinkdevices.job.batch;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The end of the exactly-once test: count, sum and sum of squares of the values seen, kept in
 * checkpointed operator state, so that after a restore it continues from the checkpoint's totals
 * exactly as Flink's guarantee says. Publishes its totals when its input ends (only the attempt that
 * completes gets there) and counts completed checkpoints.
 */
final class CountingSink extends AbstractStreamOperator<Void> implements OneInputStreamOperator<Long, Void> {
    private static final long serialVersionUID = 1L;

    /** Totals by run name: count, sum, sum of squares. */
    static final ConcurrentHashMap<String, long[]> TOTALS = new ConcurrentHashMap<>();
    /** Checkpoints completed, by run name. */
    static final ConcurrentHashMap<String, AtomicInteger> CHECKPOINTS = new ConcurrentHashMap<>();

    private final String run;
    private transient ListState<Long> state;
    private transient long count;
    private transient long sum;
    private transient long squares;

    CountingSink(String run) {
        this.run = run;
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        state = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("totals", Types.LONG));
        List<Long> saved = new ArrayList<>();
        state.get().forEach(saved::add);
        if (saved.size() == 3) {
            count = saved.get(0);
            sum = saved.get(1);
            squares = saved.get(2);
        }
    }

    @Override
    public void processElement(StreamRecord<Long> element) {
        long v = element.getValue();
        count++;
        sum += v;
        squares += v * v;
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        state.update(List.of(count, sum, squares));
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        super.notifyCheckpointComplete(checkpointId);
        CHECKPOINTS.computeIfAbsent(run, k -> new AtomicInteger()).incrementAndGet();
    }

    @Override
    public void finish() throws Exception {
        TOTALS.put(run, new long[] {count, sum, squares});
        super.finish();
    }
}
