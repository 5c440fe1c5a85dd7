/**
 * The TaskManager's lease table behind {@code io.flinkdevices.job.DeviceLeases}: not an API.
 */
package io.flinkdevices.job.internal.lease;
