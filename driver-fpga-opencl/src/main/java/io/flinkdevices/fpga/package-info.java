/** FPGAs and other OpenCL accelerators for Flink's external resource framework. */
package io.flinkdevices.fpga;
