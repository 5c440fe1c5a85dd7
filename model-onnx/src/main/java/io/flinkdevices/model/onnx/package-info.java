/**
 * {@code ML_PREDICT} with an ONNX model on each task's leased device: {@code CREATE MODEL ... WITH
 * ('provider' = 'onnx', 'path' = ..., 'resource' = 'gpu')}. Flink finds {@link
 * io.flinkdevices.model.onnx.OnnxModelProviderFactory} through {@code
 * META-INF/services/org.apache.flink.table.factories.Factory}; the options are in {@link
 * io.flinkdevices.model.onnx.OnnxModelOptions}.
 */
package io.flinkdevices.model.onnx;
