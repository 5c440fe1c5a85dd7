/**
 * Reading the host the way device drivers need it: the TaskManager's visible-devices variables
 * ({@link io.flinkdevices.sdk.host.VisibleDevices}) and sysfs attributes under a configurable root
 * ({@link io.flinkdevices.sdk.host.Sysfs}), with errors that name the variable or the full path,
 * what was expected and the operating system's reason.
 */
package io.flinkdevices.sdk.host;
