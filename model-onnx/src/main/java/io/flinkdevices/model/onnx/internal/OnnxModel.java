package io.flinkdevices.model.onnx.internal;

import ai.onnxruntime.NodeInfo;
import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OnnxValue;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtProvider;
import ai.onnxruntime.OrtSession;
import ai.onnxruntime.TensorInfo;
import ai.onnxruntime.ValueInfo;
import org.apache.flink.table.api.ValidationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/** One ONNX Runtime session over a model file, on the CPU or one CUDA device. */
public final class OnnxModel implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(OnnxModel.class);

    private final String file;
    private final OrtEnvironment env;
    private final OrtSession session;
    private final String device;
    private final List<TensorSpec> inputs;
    private final List<TensorSpec> outputs;

    private OnnxModel(String file, OrtEnvironment env, OrtSession session, String device) throws OrtException {
        this.file = file;
        this.env = env;
        this.session = session;
        this.device = device;
        this.inputs = specs(session.getInputInfo());
        this.outputs = specs(session.getOutputInfo());
    }

    /**
     * Opens the model on CUDA device {@code cudaDevice} when given and this ONNX Runtime build has
     * the CUDA execution provider, on the CPU otherwise; {@code why} says (in the WARN) why a device
     * was wanted or why there is none.
     *
     * @param option the option that named the file, for messages
     * @throws ValidationException when the file is missing or not a model ONNX Runtime loads
     */
    public static OnnxModel open(String path, String option, OptionalInt cudaDevice, String deviceName) {
        return open(path, option, cudaDevice, deviceName, 1);
    }

    /**
     * As {@link #open(String, String, OptionalInt, String)}, a CPU session running each batch on
     * {@code cpuThreads} threads (ONNX Runtime's intra-op threads; 1: on the calling thread only).
     */
    public static OnnxModel open(String path, String option, OptionalInt cudaDevice, String deviceName, int cpuThreads) {
        checkFile(path, option);
        OrtEnvironment env;
        try {
            env = OrtEnvironment.getEnvironment();
        } catch (LinkageError e) {
            throw new ValidationException("ONNX Runtime's native library does not load in this JVM (" + e
                    + "); the model file " + path + " cannot be opened", e);
        }
        if (cudaDevice.isPresent()) {
            if (!OrtEnvironment.getAvailableProviders().contains(OrtProvider.CUDA)) {
                LOG.warn("ONNX model {} runs on the CPU, not on {} (CUDA device {}): this ONNX Runtime build has no CUDA"
                        + " execution provider (providers: {}); put com.microsoft.onnxruntime:onnxruntime_gpu with CUDA and"
                        + " cuDNN on the TaskManagers to use the GPU", path, deviceName, cudaDevice.getAsInt(),
                        OrtEnvironment.getAvailableProviders());
            } else {
                try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
                    options.addCUDA(cudaDevice.getAsInt());
                    return new OnnxModel(path, env, env.createSession(path, options), "CUDA device " + cudaDevice.getAsInt());
                } catch (OrtException e) {
                    LOG.warn("ONNX model {} runs on the CPU, not on {} (CUDA device {}): ONNX Runtime's CUDA execution"
                            + " provider failed: {}", path, deviceName, cudaDevice.getAsInt(), e.getMessage());
                }
            }
        }
        try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
            // each batch in flight runs on its own thread; more threads a batch only pay where a run is long
            options.setIntraOpNumThreads(cpuThreads);
            if (!"true".equals(System.getProperty("flink-devices.onnx.cpu-spinning"))) {
                // ONNX Runtime's CPU threads spin between runs by default; beside Flink's own threads
                // on the same cores that spinning takes the time the pipeline needs
                options.addConfigEntry("session.intra_op.allow_spinning", "0");
            }
            return new OnnxModel(path, env, env.createSession(path, options), "CPU");
        } catch (OrtException e) {
            throw new ValidationException("'" + option + "' = " + path + " is not a model ONNX Runtime " + env.getVersion()
                    + " can load: " + e.getMessage(), e);
        }
    }

    /** Reads a model's inputs and outputs, on the CPU. */
    public static List<List<TensorSpec>> signature(String path, String option) {
        try (OnnxModel m = open(path, option, OptionalInt.empty(), null)) {
            return List.of(m.inputs, m.outputs);
        }
    }

    private static void checkFile(String path, String option) {
        Path p = Path.of(path);
        if (!Files.exists(p)) {
            throw new ValidationException("'" + option + "' = " + path + ": no such file (the model file must be on every"
                    + " TaskManager at this path, and on the client that plans the query if it should be checked there)");
        }
        if (!Files.isRegularFile(p)) {
            throw new ValidationException("'" + option + "' = " + path + ": not a regular file; expected an ONNX model file");
        }
        if (!Files.isReadable(p)) {
            throw new ValidationException("'" + option + "' = " + path + ": not readable by this process (permission denied)");
        }
    }

    public List<TensorSpec> inputs() {
        return inputs;
    }

    public List<TensorSpec> outputs() {
        return outputs;
    }

    /** {@code CPU} or {@code CUDA device 0}. */
    public String device() {
        return device;
    }

    /** Runs one batch: one tensor per input binding, in order; returns the output tensors in the model's order. */
    public Map<String, RowTensors.Output> run(List<RowTensors.Input> inputTensors, OrtSession.RunOptions runOptions)
            throws OrtException {
        Map<String, OnnxTensor> feed = new java.util.LinkedHashMap<>();
        try {
            for (RowTensors.Input in : inputTensors) {
                feed.put(in.binding.tensor().name(), OnnxTensor.createTensor(env, in.buffer, in.shape,
                        OnnxJavaType.valueOf(in.binding.element().name())));
            }
            try (OrtSession.Result result = session.run(feed, runOptions)) {
                Map<String, RowTensors.Output> out = new java.util.HashMap<>();
                for (Map.Entry<String, OnnxValue> e : result) {
                    out.put(e.getKey(), RowTensors.copyOut(e.getKey(), e.getValue()));
                }
                return out;
            }
        } finally {
            for (OnnxTensor t : feed.values()) {
                t.close();
            }
        }
    }

    @Override
    public void close() {
        try {
            session.close();
        } catch (OrtException e) {
            LOG.warn("closing the ONNX Runtime session of {} failed: {}", file, e.getMessage());
        }
    }

    private static List<TensorSpec> specs(Map<String, NodeInfo> infos) {
        List<TensorSpec> out = new ArrayList<>();
        for (NodeInfo n : infos.values()) {
            ValueInfo v = n.getInfo();
            if (v instanceof TensorInfo) {
                TensorInfo t = (TensorInfo) v;
                out.add(new TensorSpec(n.getName(), t.type.name().toLowerCase(java.util.Locale.ROOT),
                        ElementType.ofOnnxJavaType(t.type.name()).orElse(null), t.getShape()));
            } else {
                out.add(new TensorSpec(n.getName(), v.getClass().getSimpleName(), null, new long[0]));
            }
        }
        return out;
    }
}
