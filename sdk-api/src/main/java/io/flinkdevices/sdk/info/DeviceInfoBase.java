package io.flinkdevices.sdk.info;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The property view shared by the typed infos: {@code getKeys()} lists exactly the keys whose
 * {@code getProperty()} is present, in a stable order, derived from the subclass's fields.
 *
 * <p>The map is rebuilt on demand rather than stored: Flink's Kryo fallback and Java
 * serialization copy only the fields, never an unmodifiable map they could not rebuild.
 *
 * <p>Live keys ({@link LiveProperties}: {@code health}, {@code health.*}, {@code metric.*}) are
 * read from the attached live properties on every call and take no part in equality; they are
 * transient, so a serialized copy has none.
 */
abstract class DeviceInfoBase implements ExternalResourceInfo, java.io.Serializable {

    private static final long serialVersionUID = 1L;

    private transient volatile Map<String, String> properties;

    // set once, in the subclass's constructor
    private transient LiveProperties live;

    /** Attaches the live keys; subclasses call it from their constructor only. */
    final void attachLive(LiveProperties live) {
        this.live = live;
    }

    /** The live keys of this info; {@link LiveProperties#NONE} when it has none. */
    public final LiveProperties live() {
        LiveProperties l = live;
        return l == null ? LiveProperties.NONE : l;
    }

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
        LiveProperties l = live;
        if (l != null && LiveProperties.isLiveKey(key)) {
            return l.get(key);
        }
        return Optional.ofNullable(props().get(key));
    }

    @Override
    public final Collection<String> getKeys() {
        LiveProperties l = live;
        if (l == null) {
            return props().keySet();
        }
        Collection<String> liveKeys = l.keys();
        if (liveKeys.isEmpty()) {
            return props().keySet();
        }
        List<String> all = new ArrayList<>(props().keySet());
        all.addAll(liveKeys);
        return Collections.unmodifiableList(all);
    }

    /** All present properties, live ones with their latest values last, in a stable order, unmodifiable. */
    public final Map<String, String> asMap() {
        LiveProperties l = live;
        if (l == null) {
            return props();
        }
        Map<String, String> all = new LinkedHashMap<>(props());
        for (String k : l.keys()) {
            l.get(k).ifPresent(v -> all.put(k, v));
        }
        return Collections.unmodifiableMap(all);
    }

    @Override
    public final String toString() {
        return getClass().getSimpleName() + asMap();
    }

    /** {@code s} trimmed, or null when it is null or blank: how the infos store optional text. */
    static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.trim();
    }
}
