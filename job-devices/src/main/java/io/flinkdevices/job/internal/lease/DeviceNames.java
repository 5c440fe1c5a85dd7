package io.flinkdevices.job.internal.lease;

import io.flinkdevices.sdk.info.LiveProperties;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

/** A device's name in messages and reports, from the properties every kind of info may have. */
public final class DeviceNames {

    private DeviceNames() {}

    /**
     * The monitor's name of the device, else its UUID ({@code GPU-...}), port ({@code mlx5_0/1}),
     * OpenCL or plain index ({@code #0}), else the info itself.
     */
    public static String of(ExternalResourceInfo info) {
        String monitored = Health.value(info, LiveProperties.KEY_HEALTH_DEVICE);
        if (present(monitored)) {
            return monitored;
        }
        String uuid = Health.value(info, "uuid");
        if (present(uuid)) {
            return uuid;
        }
        String device = Health.value(info, "device");
        String port = Health.value(info, "port");
        if (present(device) && present(port)) {
            return device + "/" + port;
        }
        String index = Health.value(info, "index");
        if (present(index)) {
            return "#" + index;
        }
        String openclIndex = Health.value(info, "device-index");
        if (present(openclIndex)) {
            return "#" + openclIndex;
        }
        return String.valueOf(info);
    }

    private static boolean present(String v) {
        return v != null && !v.isEmpty();
    }
}
