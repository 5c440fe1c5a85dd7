package io.flinkdevices.testkit.contract;

import org.apache.flink.annotation.PublicEvolving;

/**
 * Optional abilities of a driver. A driver under the {@link DriverContractKit} declares which it
 * has in {@link DriverContractKit#capabilities()}; the kit then proves each declared one works and
 * each undeclared one is really absent, so that a declaration can never pass silently.
 */
@PublicEvolving
public enum DriverCapability {

    /**
     * The driver implements {@link io.flinkdevices.sdk.deploy.KubernetesResourceDecorator}: it
     * tells the CLI which extended resources a TaskManager pod must request.
     */
    KUBERNETES_DECORATOR,

    /**
     * The driver implements {@link io.flinkdevices.sdk.deploy.YarnResourceDecorator}: it tells
     * the CLI which Yarn resource types a TaskManager container must request.
     */
    YARN_DECORATOR,

    /**
     * Every info names the environment variable that restricts a process to its device and the
     * value that selects it alone (the {@code visible-devices.env} and {@code
     * visible-devices.value} properties of {@link io.flinkdevices.sdk.info.GpuInfo}), for example
     * {@code CUDA_VISIBLE_DEVICES=3}.
     */
    VISIBLE_DEVICES,

    /**
     * The driver shares a host's devices with the other TaskManagers of the host through a
     * coordination file, switched on by the parameters of {@link
     * DriverContractKit#coordinationParams(java.nio.file.Path)} (by default the SDK's {@code
     * coordination.enabled} and {@code coordination.file} of {@link
     * io.flinkdevices.sdk.coordination.CoordinationParams}): no device goes to two TaskManagers, a
     * failed allocation records nothing, and a killed TaskManager's devices are taken over.
     */
    COORDINATION,

    /**
     * The driver watches its devices while jobs run through the SDK's {@link
     * io.flinkdevices.sdk.health.DeviceMonitor}: every info carries the live keys of {@link
     * io.flinkdevices.sdk.info.LiveProperties} ({@code health}, {@code health.device}, {@code
     * health.action}, numeric {@code metric.<name>}), which read without waiting, and the
     * parameter {@code monitor.interval: 0} leaves them absent. Not declared, no info has a key of
     * that namespace (no stale keys).
     */
    MONITORING
}
