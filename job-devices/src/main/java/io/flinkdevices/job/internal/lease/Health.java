package io.flinkdevices.job.internal.lease;

import io.flinkdevices.sdk.info.LiveProperties;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.util.Optional;

/** A device's health as its driver's monitor last saw it; devices without monitoring count as working. */
final class Health {

    private Health() {}

    /** Failed, or out of service on the host (quarantined, also while it reads ok again): never leased. */
    static boolean isFailed(ExternalResourceInfo info) {
        return "failed".equals(value(info, LiveProperties.KEY_HEALTH))
                || "true".equals(value(info, LiveProperties.KEY_HEALTH_QUARANTINED));
    }

    /** 0 working, 1 degraded: the order devices are handed out in. */
    static int rank(ExternalResourceInfo info) {
        return "degraded".equals(value(info, LiveProperties.KEY_HEALTH)) ? 1 : 0;
    }

    static String reason(ExternalResourceInfo info) {
        String r = value(info, LiveProperties.KEY_HEALTH_REASON);
        if ("true".equals(value(info, LiveProperties.KEY_HEALTH_QUARANTINED)) && !"failed".equals(value(info, LiveProperties.KEY_HEALTH))) {
            return "quarantined on the host until it has been healthy for health.recover-after";
        }
        return r == null ? "no reason given" : r;
    }

    // a foreign implementation may break the contract and return null
    static String value(ExternalResourceInfo info, String key) {
        Optional<String> v = info.getProperty(key);
        return v == null ? null : v.orElse(null);
    }
}
