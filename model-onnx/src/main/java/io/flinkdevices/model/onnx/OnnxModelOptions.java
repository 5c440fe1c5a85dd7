package io.flinkdevices.model.onnx;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

import java.time.Duration;

/** The options of {@code CREATE MODEL ... WITH ('provider' = 'onnx', ...)}. */
@PublicEvolving
public final class OnnxModelOptions {

    private OnnxModelOptions() {}

    public static final ConfigOption<String> PATH = ConfigOptions.key("path").stringType().noDefaultValue()
            .withDescription("The ONNX model file, at this path on every TaskManager (and on the client that plans"
                    + " the query, where it is checked against INPUT and OUTPUT when present).");

    public static final ConfigOption<String> RESOURCE = ConfigOptions.key("resource").stringType().noDefaultValue()
            .withDescription("The external resource each task leases a device of (for example 'gpu'). Unset: the CPU.");

    public static final ConfigOption<Double> SHARE = ConfigOptions.key("share").doubleType().defaultValue(1.0)
            .withDescription("The share of one device each task leases, greater than 0 and at most 1.");

    public static final ConfigOption<Integer> BATCH_SIZE = ConfigOptions.key("batch-size").intType().defaultValue(64)
            .withDescription("The most rows in one model run, 1 to 65536.");

    public static final ConfigOption<Integer> MAX_IN_FLIGHT = ConfigOptions.key("max-in-flight").intType().defaultValue(2)
            .withDescription("The most batches a task runs at once, 1 to 64.");

    public static final ConfigOption<Integer> CPU_THREADS = ConfigOptions.key("cpu-threads").intType().defaultValue(1)
            .withDescription("The threads one batch runs on when the model runs on the CPU (ONNX Runtime's intra-op"
                    + " threads), 1 to 256; batches in flight run side by side, so a task uses up to 'max-in-flight' x"
                    + " 'cpu-threads' cores.");

    public static final ConfigOption<Duration> TIMEOUT = ConfigOptions.key("timeout").durationType()
            .defaultValue(Duration.ofSeconds(60))
            .withDescription("How long one batch may run before it is cancelled and the task fails, 1 ms to 1 h.");

    public static final ConfigOption<Duration> BATCH_WAIT = ConfigOptions.key("batch-wait").durationType()
            .defaultValue(Duration.ofMillis(5))
            .withDescription("How long the first row of a batch that is not full waits for more rows, 0 to 10 s.");
}
