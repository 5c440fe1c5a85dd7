/**
 * Cross-process device coordination: TaskManagers that share a host take devices through one
 * coordination file per device class, so that no device is handed to two of them. Drivers read
 * the shared parameters with {@link io.flinkdevices.sdk.coordination.CoordinationParams} and
 * allocate with {@link io.flinkdevices.sdk.coordination.DeviceCoordinator}.
 */
package io.flinkdevices.sdk.coordination;
