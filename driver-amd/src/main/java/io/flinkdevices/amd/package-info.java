/**
 * AMD GPUs (Instinct and Radeon) for Flink's external resource framework: {@link
 * io.flinkdevices.amd.AmdGpuDriverFactory} is the class operators configure; everything else is
 * internal to the plugin.
 */
package io.flinkdevices.amd;
