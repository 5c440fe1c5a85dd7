/**
 * Reading the host the way device drivers need it: the TaskManager's visible-devices variables
 * ({@link io.flinkdevices.sdk.host.VisibleDevices}), sysfs attributes under a configurable root
 * ({@link io.flinkdevices.sdk.host.Sysfs}) and other files of the host, read without ever waiting
 * on a FIFO ({@link io.flinkdevices.sdk.host.HostFiles}), with errors that name the variable or the full path,
 * what was expected and the operating system's reason.
 */
package io.flinkdevices.sdk.host;
