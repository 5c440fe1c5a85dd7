/**
 * Batching records through a device with several batches in flight: {@link
 * io.flinkdevices.job.batch.DeviceBatchOperator} (the operator a job uses), {@link
 * io.flinkdevices.job.batch.Batcher} (the same without Flink, for an operator of one's own),
 * {@link io.flinkdevices.job.batch.BatchBackend} (the device side: slots of reusable off-heap
 * buffers, {@code start} and a bounded {@code finish}), {@link
 * io.flinkdevices.job.batch.BatchCodec} (records into buffers, results out), {@link
 * io.flinkdevices.job.batch.BatchSettings} (checked batch size, slots and flush timeout), {@link
 * io.flinkdevices.job.batch.BatchMetrics} and {@link io.flinkdevices.job.batch.NoComputeBackend}
 * (no device: measures the pipeline around one).
 */
package io.flinkdevices.job.batch;
