/**
 * What a job author depends on to watch devices while the job runs: {@link
 * io.flinkdevices.job.DeviceMetrics} (a gauge per device metric in the operator's metric group)
 * and {@link io.flinkdevices.job.DeviceHealthGuard} (fails a task whose device failed). Both read
 * the live keys the drivers' monitors keep on the infos ({@code health}, {@code metric.<name>}),
 * across the plugin class loader, without waiting.
 */
package io.flinkdevices.job;
