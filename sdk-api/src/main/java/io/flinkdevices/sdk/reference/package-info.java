/**
 * What a driver documents about itself: {@link io.flinkdevices.sdk.reference.DocumentedDriver}
 * lists its parameters ({@link io.flinkdevices.sdk.reference.ParamDoc}) and metrics ({@link
 * io.flinkdevices.sdk.reference.MetricDoc}), from which reference pages are generated and checked.
 */
package io.flinkdevices.sdk.reference;
