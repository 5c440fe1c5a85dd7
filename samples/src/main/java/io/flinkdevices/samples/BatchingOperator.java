package io.flinkdevices.samples;

import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;

/**
 * A one-input operator that gathers records and processes them in batches on a device, the shape
 * of both sample operators. A partial batch is flushed before a watermark is forwarded, before a
 * checkpoint barrier (so no record is held across a checkpoint) and at the end of input; the
 * device is released when the operator closes.
 *
 * <p>Only the FIR sample's operator still extends it; the GPU and RDMA samples use job-devices'
 * {@link io.flinkdevices.job.batch.DeviceBatchOperator}, which also keeps several batches in flight,
 * flushes on a timeout and reports batch metrics. This class goes when the FIR sample moves too.
 */
public abstract class BatchingOperator<IN, OUT> extends AbstractStreamOperator<OUT>
        implements OneInputStreamOperator<IN, OUT>, BoundedOneInput {

    private static final long serialVersionUID = 1L;

    /** Processes the records gathered so far, if any, and emits their results. */
    protected abstract void flush();

    /** Releases the device the batches run on; called once, from {@link #close()}. */
    protected abstract void closeDevice() throws Exception;

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        flush();
        super.processWatermark(mark);
    }

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        flush();
        super.prepareSnapshotPreBarrier(checkpointId);
    }

    @Override
    public void endInput() {
        flush();
    }

    @Override
    public void close() throws Exception {
        try {
            closeDevice();
        } finally {
            super.close();
        }
    }
}
