package io.flinkdevices.testkit.contract.internal;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * A copy of an info's properties in a class that is not the driver's: what job code holds when
 * the info was created by a plugin class loader and {@code instanceof} fails.
 */
public final class ForeignInfo implements ExternalResourceInfo {

    private final Map<String, String> properties;

    private ForeignInfo(Map<String, String> properties) {
        this.properties = Collections.unmodifiableMap(new LinkedHashMap<>(properties));
    }

    /** Copies every property {@code info} lists in its keys. */
    public static ForeignInfo copyOf(ExternalResourceInfo info) {
        return new ForeignInfo(propertiesOf(info));
    }

    /** An info with exactly {@code properties}. */
    public static ForeignInfo of(Map<String, String> properties) {
        return new ForeignInfo(properties);
    }

    /** Every key of {@code info} with its value (missing values left out), in key order. */
    public static Map<String, String> propertiesOf(ExternalResourceInfo info) {
        Map<String, String> copy = new LinkedHashMap<>();
        for (String key : info.getKeys()) {
            info.getProperty(key).ifPresent(v -> copy.put(key, v));
        }
        return copy;
    }

    @Override
    public Optional<String> getProperty(String key) {
        return Optional.ofNullable(properties.get(key));
    }

    @Override
    public Collection<String> getKeys() {
        return properties.keySet();
    }

    @Override
    public String toString() {
        return "ForeignInfo" + properties;
    }
}
