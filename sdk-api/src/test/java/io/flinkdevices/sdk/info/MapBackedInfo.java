package io.flinkdevices.sdk.info;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * An {@link ExternalResourceInfo} that is not one of ours: what a third-party driver, or our own
 * driver seen through another class loader, hands a task.
 */
class MapBackedInfo implements ExternalResourceInfo {

    private final Map<String, String> properties;

    MapBackedInfo(Map<String, String> properties) {
        this.properties = new LinkedHashMap<>(properties);
    }

    /** A copy of {@code properties} without {@code key}. */
    static MapBackedInfo without(Map<String, String> properties, String key) {
        Map<String, String> copy = new LinkedHashMap<>(properties);
        copy.remove(key);
        return new MapBackedInfo(copy);
    }

    /** A copy of {@code properties} with {@code key} set to {@code value}. */
    static MapBackedInfo with(Map<String, String> properties, String key, String value) {
        Map<String, String> copy = new LinkedHashMap<>(properties);
        copy.put(key, value);
        return new MapBackedInfo(copy);
    }

    @Override
    public Optional<String> getProperty(String key) {
        return Optional.ofNullable(properties.get(key));
    }

    @Override
    public Collection<String> getKeys() {
        return properties.keySet();
    }
}
