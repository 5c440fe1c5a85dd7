package io.flinkdevices.model.onnx.internal;

import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.table.functions.FunctionContext;

import java.lang.reflect.Field;

/**
 * The task's {@link RuntimeContext} behind a table function's {@link FunctionContext}, which the
 * lease API needs (task, attempt, slot, job) and the table API does not expose. Flink 1.20 to 2.3
 * keep it in the field {@code context}.
 */
final class FunctionContexts {

    private FunctionContexts() {}

    static RuntimeContext runtimeContext(FunctionContext context) {
        Object value;
        try {
            Field f = FunctionContext.class.getDeclaredField("context");
            f.setAccessible(true);
            value = f.get(context);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot lease a device for ML_PREDICT: this Flink version's FunctionContext"
                    + " has no readable field 'context' with the task's RuntimeContext (" + e + ")", e);
        }
        if (!(value instanceof RuntimeContext)) {
            throw new IllegalStateException("cannot lease a device for ML_PREDICT: the function runs without a task"
                    + " (FunctionContext holds no RuntimeContext), for example while the planner folds constants");
        }
        return (RuntimeContext) value;
    }
}
