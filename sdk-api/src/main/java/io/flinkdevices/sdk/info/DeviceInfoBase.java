package io.flinkdevices.sdk.info;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.util.Collection;
import java.util.Map;
import java.util.Optional;

/**
 * The property view shared by the typed infos: {@code getKeys()} lists exactly the keys whose
 * {@code getProperty()} is present, in a stable order, derived from the subclass's fields.
 *
 * <p>The map is rebuilt on demand rather than stored: Flink's Kryo fallback and Java
 * serialization copy only the fields, never an unmodifiable map they could not rebuild.
 */
abstract class DeviceInfoBase implements ExternalResourceInfo, java.io.Serializable {

    private static final long serialVersionUID = 1L;

    private transient volatile Map<String, String> properties;

    /** The present properties, in their stable order, as an unmodifiable map. */
    abstract Map<String, String> buildProperties();

    private Map<String, String> props() {
        Map<String, String> p = properties;
        if (p == null) {
            p = buildProperties();
            properties = p;
        }
        return p;
    }

    @Override
    public final Optional<String> getProperty(String key) {
        return Optional.ofNullable(props().get(key));
    }

    @Override
    public final Collection<String> getKeys() {
        return props().keySet();
    }

    /** All present properties, in a stable order, unmodifiable. */
    public final Map<String, String> asMap() {
        return props();
    }

    @Override
    public final String toString() {
        return getClass().getSimpleName() + props();
    }
}
