package io.flinkdevices.model.onnx.internal;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.table.functions.AsyncPredictFunction;
import org.apache.flink.table.ml.AsyncPredictRuntimeProvider;
import org.apache.flink.table.ml.ModelProvider;

/** Hands the planner an asynchronous predict function: rows go to the model in batches. */
public final class OnnxModelProvider implements AsyncPredictRuntimeProvider {

    /** ML_PREDICT's per-query override of the async operator's row capacity. */
    private static final ConfigOption<Integer> QUERY_MAX_CONCURRENT =
            ConfigOptions.key("max-concurrent-operations").intType().noDefaultValue();

    private final ModelSettings settings;

    public OnnxModelProvider(ModelSettings settings) {
        this.settings = settings;
    }

    public ModelSettings settings() {
        return settings;
    }

    @Override
    public AsyncPredictFunction createAsyncPredictFunction(Context context) {
        ModelSettings s = context.runtimeConfig().getOptional(QUERY_MAX_CONCURRENT).map(settings::withCapacity).orElse(settings);
        return new OnnxPredictFunction(s);
    }

    @Override
    public ModelProvider copy() {
        return new OnnxModelProvider(settings);
    }
}
