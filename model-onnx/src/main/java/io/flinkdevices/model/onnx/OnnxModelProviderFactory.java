package io.flinkdevices.model.onnx;

import io.flinkdevices.model.onnx.internal.ColumnSpec;
import io.flinkdevices.model.onnx.internal.ModelSettings;
import io.flinkdevices.model.onnx.internal.OnnxModel;
import io.flinkdevices.model.onnx.internal.OnnxModelProvider;
import io.flinkdevices.model.onnx.internal.TensorLayout;
import io.flinkdevices.model.onnx.internal.TensorSpec;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.factories.ModelProviderFactory;
import org.apache.flink.table.ml.ModelProvider;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Flink finds this factory by {@code 'provider' = 'onnx'} in {@code CREATE MODEL}: {@code
 * ML_PREDICT} then runs the ONNX model file through ONNX Runtime in each task, on the device the
 * task leases (see {@link OnnxModelOptions}), in batches.
 *
 * <pre>{@code
 * CREATE MODEL scorer
 *   INPUT (features ARRAY<FLOAT>) OUTPUT (score FLOAT)
 *   WITH ('provider' = 'onnx', 'path' = '/models/scorer.onnx', 'resource' = 'gpu');
 * SELECT id, score FROM ML_PREDICT(TABLE events, MODEL scorer, DESCRIPTOR(features));
 * }</pre>
 *
 * <p>Options are checked when the query is planned, all problems in one message; when the model
 * file is readable there too, INPUT and OUTPUT are checked against it then, and otherwise when each
 * task opens it.
 */
@PublicEvolving
public final class OnnxModelProviderFactory implements ModelProviderFactory {

    /** The {@code 'provider'} value. */
    public static final String IDENTIFIER = "onnx";

    /** Flink's own setting for how many rows its async ML_PREDICT operator holds at once. */
    static final ConfigOption<Integer> MAX_CONCURRENT_OPERATIONS =
            ConfigOptions.key("table.exec.async-ml-predict.max-concurrent-operations").intType().defaultValue(10);

    private static final long MAX_BATCH = 65_536;
    private static final int MAX_IN_FLIGHT = 64;
    private static final int MAX_CPU_THREADS = 256;
    private static final Duration MAX_TIMEOUT = Duration.ofHours(1);
    private static final Duration MAX_BATCH_WAIT = Duration.ofSeconds(10);

    @Override
    public String factoryIdentifier() {
        return IDENTIFIER;
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Set.of(OnnxModelOptions.PATH);
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        return Set.of(OnnxModelOptions.RESOURCE, OnnxModelOptions.SHARE, OnnxModelOptions.BATCH_SIZE,
                OnnxModelOptions.MAX_IN_FLIGHT, OnnxModelOptions.CPU_THREADS, OnnxModelOptions.TIMEOUT,
                OnnxModelOptions.BATCH_WAIT);
    }

    @Override
    public ModelProvider createModelProvider(Context context) {
        FactoryUtil.ModelProviderFactoryHelper helper = FactoryUtil.createModelProviderFactoryHelper(this, context);
        helper.validate();
        ReadableConfig options = helper.getOptions();
        String model = context.getObjectIdentifier().asSummaryString();
        List<String> problems = new ArrayList<>();
        String path = options.get(OnnxModelOptions.PATH);
        if (path.isBlank()) {
            problems.add("'path' must name the ONNX model file but is empty");
        }
        String resource = options.getOptional(OnnxModelOptions.RESOURCE).orElse(null);
        if (resource != null && resource.isBlank()) {
            problems.add("'resource' must name an external resource (for example 'gpu') but is empty; leave it out for the CPU");
        }
        double share = options.get(OnnxModelOptions.SHARE);
        if (!(share > 0 && share <= 1) || Math.round(share * 1_000_000) == 0) {
            problems.add("'share' must be greater than 0 (at least 0.000001) and at most 1 but is " + share);
        }
        if (resource == null && options.getOptional(OnnxModelOptions.SHARE).isPresent()) {
            problems.add("'share' is set but 'resource' is not: set 'resource' to lease a share of a device");
        }
        int batchSize = options.get(OnnxModelOptions.BATCH_SIZE);
        if (batchSize < 1 || batchSize > MAX_BATCH) {
            problems.add("'batch-size' must be from 1 to " + MAX_BATCH + " rows but is " + batchSize);
        }
        int inFlight = options.get(OnnxModelOptions.MAX_IN_FLIGHT);
        if (inFlight < 1 || inFlight > MAX_IN_FLIGHT) {
            problems.add("'max-in-flight' must be from 1 to " + MAX_IN_FLIGHT + " batches but is " + inFlight);
        }
        int cpuThreads = options.get(OnnxModelOptions.CPU_THREADS);
        if (cpuThreads < 1 || cpuThreads > MAX_CPU_THREADS) {
            problems.add("'cpu-threads' must be from 1 to " + MAX_CPU_THREADS + " threads but is " + cpuThreads);
        }
        Duration timeout = options.get(OnnxModelOptions.TIMEOUT);
        if (timeout.toMillis() < 1 || timeout.compareTo(MAX_TIMEOUT) > 0) {
            problems.add("'timeout' must be from 1 ms to 1 h but is " + timeout.toMillis() + " ms");
        }
        Duration batchWait = options.get(OnnxModelOptions.BATCH_WAIT);
        if (batchWait.isNegative() || batchWait.compareTo(MAX_BATCH_WAIT) > 0) {
            problems.add("'batch-wait' must be from 0 ms to 10 s but is " + batchWait.toMillis() + " ms");
        }
        if (!problems.isEmpty()) {
            throw new ValidationException("model " + model + " ('provider' = 'onnx'): " + String.join("; ", problems));
        }
        List<ColumnSpec> inputs = columns(context.getCatalogModel().getResolvedInputSchema());
        List<ColumnSpec> outputs = columns(context.getCatalogModel().getResolvedOutputSchema());
        if (Files.exists(Path.of(path))) {
            List<List<TensorSpec>> signature = OnnxModel.signature(path, OnnxModelOptions.PATH.key());
            TensorLayout.bind("INPUT", inputs, signature.get(0), path);
            TensorLayout.bind("OUTPUT", outputs, signature.get(1), path);
        }
        int capacity = context.getConfiguration().get(MAX_CONCURRENT_OPERATIONS);
        return new OnnxModelProvider(new ModelSettings(path, resource, share, batchSize, inFlight, cpuThreads, timeout, batchWait,
                inputs, outputs, capacity));
    }

    private static List<ColumnSpec> columns(ResolvedSchema schema) {
        List<ColumnSpec> out = new ArrayList<>();
        for (Column c : schema.getColumns()) {
            out.add(new ColumnSpec(c.getName(), c.getDataType().getLogicalType()));
        }
        return out;
    }
}
