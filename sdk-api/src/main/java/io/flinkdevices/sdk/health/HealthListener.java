package io.flinkdevices.sdk.health;

import org.apache.flink.annotation.PublicEvolving;

import java.time.Instant;
import java.util.Map;

/**
 * Told every good sample of a {@link DeviceMonitor}, on the monitor's thread, before {@link
 * HealthAction#STOP_TASKMANAGER} may end the process: what takes a failed device out of service
 * ({@code DeviceCoordinator.quarantine().listener(settings)}) listens here.
 *
 * <p>A listener bounds its own work (a lock wait with a timeout): it delays the next sample, never a
 * reader. One that throws is logged and the monitor goes on.
 */
@PublicEvolving
@FunctionalInterface
public interface HealthListener {

    /**
     * A sample was taken.
     *
     * @param samples a sample per monitored device id, in the monitor's order; a device the sampler
     *     left out is there as {@link HealthState#FAILED} ("not seen")
     * @param at when the sample completed
     */
    void sampled(Map<String, DeviceSample> samples, Instant at);

    /**
     * Called once by {@link DeviceMonitor#addListener}: a listener that takes devices out of
     * service tells the monitor so ({@link DeviceMonitor#outOfService}), which the devices' infos
     * then show. Does nothing by default.
     */
    default void attached(DeviceMonitor monitor) {}
}
