/**
 * The ONNX provider's run time (session, column-to-tensor layout, batching): not an API.
 */
package io.flinkdevices.model.onnx.internal;
