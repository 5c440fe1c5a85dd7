package io.flinkdevices.samples.fpga;

import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Passes blocks on one per 10 ms until a checkpoint of the run completed, then one per
 * millisecond, so that a checkpoint completes mid-stream even on a loaded machine, and records by
 * run name that one did.
 */
final class Trickle extends RichMapFunction<SampleBlock, SampleBlock> implements CheckpointListener {
    private static final long serialVersionUID = 1L;

    private static final Set<String> CHECKPOINTED = ConcurrentHashMap.newKeySet();

    private final String run;

    Trickle(String run) {
        this.run = run;
    }

    /** Whether a checkpoint of the run completed. */
    static boolean checkpointed(String run) {
        return CHECKPOINTED.contains(run);
    }

    @Override
    public SampleBlock map(SampleBlock block) throws Exception {
        // slow until a checkpoint of the run completed (10 ms a block: 7.5 s of stream per subtask
        // for the first one, even on a loaded machine), then 1 ms a block
        Thread.sleep(checkpointed(run) ? 1 : 10);
        return block;
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        CHECKPOINTED.add(run);
    }
}
