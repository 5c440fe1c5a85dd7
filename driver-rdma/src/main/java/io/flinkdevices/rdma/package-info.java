/**
 * RDMA NICs for Flink's external resource framework: {@link io.flinkdevices.rdma.RdmaDriverFactory}
 * is the class operators configure; everything else is internal to the plugin.
 */
package io.flinkdevices.rdma;
