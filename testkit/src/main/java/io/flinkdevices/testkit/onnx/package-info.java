/**
 * Small ONNX models with known weights, written without a download, and the same models in plain
 * Java: {@link io.flinkdevices.testkit.onnx.OnnxModels}.
 */
package io.flinkdevices.testkit.onnx;
