package io.flinkdevices.sdk.health;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Collection;
import java.util.Map;

/**
 * Samples all of a driver's monitored devices at once, for a {@link DeviceMonitor}: one call per
 * interval, on the monitor's thread, however many devices there are (one tool spawn per interval,
 * not per device or per read).
 *
 * <p>A sampler reports what it sees of each device, a vanished device included (as {@link
 * HealthState#FAILED}); a device left out of the result counts as failed ("not seen"). It throws
 * when it could not look at all (a tool that printed garbage): the monitor counts that in the
 * {@code monitor.errors} metric and keeps the previous health (see {@link DeviceMonitor}). It
 * bounds its own work (a tool run with a timeout); a sampler that hangs delays only the next
 * sample, never a reader.
 */
@PublicEvolving
@FunctionalInterface
public interface DeviceSampler {

    /**
     * Samples the devices.
     *
     * @param deviceIds the ids the monitor was created with
     * @return a sample per device id
     * @throws Exception when nothing could be sampled; the monitor counts it
     */
    Map<String, DeviceSample> sample(Collection<String> deviceIds) throws Exception;
}
