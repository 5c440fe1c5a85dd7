package io.flinkdevices.model.onnx.internal;

import java.io.Serializable;
import java.time.Duration;
import java.util.List;

/** What one ML_PREDICT call of an ONNX model needs at run time, checked. */
public final class ModelSettings implements Serializable {

    private static final long serialVersionUID = 1L;

    public final String path;
    /** Null: the CPU, no lease. */
    public final String resource;
    public final double share;
    public final int batchSize;
    public final int maxInFlight;
    /** ONNX Runtime's intra-op threads of a CPU session. */
    public final int cpuThreads;
    public final Duration timeout;
    public final Duration batchWait;
    public final List<ColumnSpec> inputs;
    public final List<ColumnSpec> outputs;
    /** The most rows Flink's async operator hands out before it waits for results. */
    public final int capacity;

    public ModelSettings(String path, String resource, double share, int batchSize, int maxInFlight, int cpuThreads, Duration timeout,
            Duration batchWait, List<ColumnSpec> inputs, List<ColumnSpec> outputs, int capacity) {
        this.path = path;
        this.resource = resource;
        this.share = share;
        this.batchSize = batchSize;
        this.maxInFlight = maxInFlight;
        this.cpuThreads = cpuThreads;
        this.timeout = timeout;
        this.batchWait = batchWait;
        this.inputs = List.copyOf(inputs);
        this.outputs = List.copyOf(outputs);
        this.capacity = capacity;
    }

    public ModelSettings withCapacity(int newCapacity) {
        return new ModelSettings(path, resource, share, batchSize, maxInFlight, cpuThreads, timeout, batchWait, inputs, outputs,
                newCapacity);
    }
}
