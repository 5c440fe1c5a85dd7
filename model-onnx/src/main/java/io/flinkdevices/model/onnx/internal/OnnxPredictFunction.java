package io.flinkdevices.model.onnx.internal;

import io.flinkdevices.job.DeviceFailedException;
import io.flinkdevices.job.DeviceHealthGuard;
import io.flinkdevices.job.DeviceLease;
import io.flinkdevices.job.DeviceLeases;
import io.flinkdevices.job.DeviceRequest;
import io.flinkdevices.sdk.info.GpuInfo;

import ai.onnxruntime.OrtSession;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.functions.AsyncPredictFunction;
import org.apache.flink.table.functions.FunctionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.OptionalInt;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * ML_PREDICT's function in one task: leases the task's device, opens one ONNX Runtime session on
 * it, and sends rows through it in batches. Stateless: Flink's async operator keeps the rows that
 * are in flight at a checkpoint in its own state and sends them again after a restore.
 */
public final class OnnxPredictFunction extends AsyncPredictFunction {

    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(OnnxPredictFunction.class);

    private final ModelSettings settings;

    private transient DeviceLease lease;
    private transient DeviceHealthGuard guard;
    private transient OnnxModel model;
    private transient List<Binding> inputs;
    private transient List<Binding> outputs;
    private transient MicroBatcher<RowData, Collection<RowData>> batcher;
    /** Input buffers of finished batches, one array per batch in flight at most: direct memory is slow to allocate. */
    private transient Queue<ByteBuffer[]> spareBuffers;

    public OnnxPredictFunction(ModelSettings settings) {
        this.settings = settings;
    }

    @Override
    public void open(FunctionContext context) throws Exception {
        try {
            OptionalInt cuda = OptionalInt.empty();
            String deviceName = null;
            if (settings.resource == null) {
                LOG.info("ONNX model {} runs on the CPU: the model has no 'resource' option", settings.path);
            } else {
                Set<ExternalResourceInfo> given = context.getExternalResourceInfos(settings.resource);
                if (given == null || given.isEmpty()) {
                    LOG.warn("ONNX model {} runs on the CPU: this TaskManager has no device of external resource '{}'"
                            + " (is '{}' listed in external-resources, and did its driver start?)", settings.path,
                            settings.resource, settings.resource);
                } else {
                    RuntimeContext runtime = FunctionContexts.runtimeContext(context);
                    lease = DeviceLeases.acquire(runtime, DeviceRequest.share(settings.resource, settings.share));
                    guard = lease.guard();
                    deviceName = lease.toString();
                    cuda = cudaDevice(lease);
                }
            }
            model = OnnxModel.open(settings.path, "path", cuda, deviceName, settings.cpuThreads);
            inputs = TensorLayout.bind("INPUT", settings.inputs, model.inputs(), settings.path);
            outputs = TensorLayout.bind("OUTPUT", settings.outputs, model.outputs(), settings.path);
            int capacity = settings.capacity;
            if (capacity < settings.batchSize) {
                LOG.warn("ONNX model {}: batches hold at most {} rows, not 'batch-size' = {}, because Flink hands the"
                        + " function at most {} rows at once; set 'table.exec.async-ml-predict.max-concurrent-operations'"
                        + " to at least 'batch-size' x 'max-in-flight' = {}", settings.path, capacity, settings.batchSize,
                        capacity, (long) settings.batchSize * settings.maxInFlight);
            }
            spareBuffers = new ConcurrentLinkedQueue<>();
            batcher = new MicroBatcher<>(this::runBatch, settings.batchSize, settings.maxInFlight, capacity,
                    settings.batchWait, settings.timeout, "timeout", "onnx-" + context.getTaskInfo().getIndexOfThisSubtask());
            LOG.info("ONNX model {} opened on {} ({}), inputs {}, outputs {}, {} batch(es) in flight{}", settings.path,
                    model.device(), lease == null ? "no lease" : lease, model.inputs(), model.outputs(), settings.maxInFlight,
                    "CPU".equals(model.device()) ? " on " + settings.cpuThreads + " CPU thread(s) each" : "");
        } catch (Exception | LinkageError e) {
            close();
            if (e instanceof LinkageError) {
                throw new IllegalStateException("ONNX model " + settings.path + " cannot be opened: " + e, e);
            }
            throw (Exception) e;
        }
    }

    @Override
    public CompletableFuture<Collection<RowData>> asyncPredict(RowData inputRow) {
        return batcher.submit(inputRow);
    }

    /**
     * Hands Flink's own future to the batch, instead of the future of {@link #asyncPredict} and a
     * stage that copies it over: at tens of thousands of rows per second the per-row futures cost
     * more than the light models' run.
     */
    @Override
    public void eval(CompletableFuture<Collection<RowData>> future, Object... args) {
        batcher.submit(GenericRowData.of(args), future);
    }

    private List<Collection<RowData>> runBatch(List<RowData> rows, MicroBatcher.Cancellation cancellation)
            throws Exception {
        List<RowData> results = predict(rows, cancellation);
        List<Collection<RowData>> out = new ArrayList<>(results.size());
        for (RowData r : results) {
            out.add(Collections.singletonList(r));
        }
        return out;
    }

    private List<RowData> predict(List<RowData> rows, MicroBatcher.Cancellation cancellation) throws Exception {
        if (guard != null) {
            guard.check();
        }
        boolean[] sent = new boolean[rows.size()];
        List<RowData> toModel = new ArrayList<>(rows.size());
        for (int i = 0; i < rows.size(); i++) {
            if (!RowTensors.hasNull(rows.get(i), inputs)) {
                sent[i] = true;
                toModel.add(rows.get(i));
            }
        }
        int arity = settings.outputs.size();
        if (toModel.isEmpty()) {
            return RowTensors.decode(java.util.Map.of(), List.of(), arity, sent, 0, settings.path);
        }
        ByteBuffer[] buffers = spareBuffers.poll();
        if (buffers == null) {
            buffers = RowTensors.buffers(inputs);
        }
        try (OrtSession.RunOptions runOptions = new OrtSession.RunOptions()) {
            List<RowTensors.Input> tensors = RowTensors.encode(toModel, inputs, buffers, settings.path);
            cancellation.onCancel(() -> terminate(runOptions));
            return RowTensors.decode(model.run(tensors, runOptions), outputs, arity, sent, toModel.size(), settings.path);
        } catch (Exception e) {
            if (guard != null) {
                // a run that fails because its device failed is reported as the device failure
                try {
                    guard.check();
                } catch (DeviceFailedException failed) {
                    failed.addSuppressed(e);
                    throw failed;
                }
            }
            throw e;
        } finally {
            // the run has returned and its tensors are closed: the next batch may write these buffers
            spareBuffers.offer(buffers);
        }
    }

    private static void terminate(OrtSession.RunOptions runOptions) {
        try {
            runOptions.setTerminate(true);
        } catch (Exception e) {
            LOG.warn("could not cancel an ONNX Runtime run: {}", e.getMessage());
        }
    }

    private OptionalInt cudaDevice(DeviceLease lease) {
        ExternalResourceInfo info = lease.infos().get(0);
        GpuInfo gpu;
        try {
            gpu = GpuInfo.from(info);
        } catch (IllegalArgumentException e) {
            LOG.warn("ONNX model {} runs on the CPU: the leased device {} of '{}' is not a GPU ({})", settings.path,
                    lease.deviceNames().get(0), settings.resource, e.getMessage());
            return OptionalInt.empty();
        }
        if (!"nvidia".equals(gpu.getVendor())) {
            LOG.warn("ONNX model {} runs on the CPU: the leased GPU {} is a '{}' GPU, and ONNX Runtime's CUDA execution"
                    + " provider runs on NVIDIA GPUs only", settings.path, lease.deviceNames().get(0), gpu.getVendor());
            return OptionalInt.empty();
        }
        return OptionalInt.of(gpu.getIndex());
    }

    @Override
    public void close() {
        boolean idle = true;
        if (batcher != null) {
            idle = batcher.close(Duration.ofSeconds(10));
            batcher = null;
        }
        if (model != null) {
            if (idle) {
                model.close();
            } else {
                // freeing a session a native run still uses would crash the TaskManager
                LOG.warn("ONNX model {}: a batch was still running 10 s after the task closed; its session is left open",
                        settings.path);
            }
            model = null;
        }
        if (lease != null) {
            lease.close();
            lease = null;
        }
    }
}
