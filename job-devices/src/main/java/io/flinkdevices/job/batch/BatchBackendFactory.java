package io.flinkdevices.job.batch;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.functions.RuntimeContext;

import java.io.Serializable;

/**
 * Opens a subtask's {@link BatchBackend} when its {@link DeviceBatchOperator} opens: the place to
 * pick the subtask's device from {@code context.getExternalResourceInfos(...)} and to fall back to
 * another path where the device cannot be used. Shipped with the job graph, so it holds only
 * serializable configuration.
 */
@PublicEvolving
@FunctionalInterface
public interface BatchBackendFactory extends Serializable {

    /**
     * A backend of {@code settings.batchSize()} records per batch and at most {@code
     * settings.slots()} slots (fewer where the device cannot keep that many in flight).
     *
     * @param context the subtask's runtime context: its index, external resources, accumulators
     * @throws Exception when no backend can be opened; the task fails with its message
     */
    BatchBackend open(BatchSettings settings, RuntimeContext context) throws Exception;
}
