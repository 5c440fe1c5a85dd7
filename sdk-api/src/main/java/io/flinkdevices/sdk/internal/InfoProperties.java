package io.flinkdevices.sdk.internal;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The property map behind every typed info: insertion-ordered, string-valued, absent values left
 * out, so that {@code getKeys()} lists exactly the keys whose {@code getProperty()} is present.
 */
public final class InfoProperties {

    private final Map<String, String> values = new LinkedHashMap<>();

    public InfoProperties put(String key, String value) {
        if (value != null) {
            values.put(key, value);
        }
        return this;
    }

    public InfoProperties put(String key, long value) {
        values.put(key, Long.toString(value));
        return this;
    }

    public InfoProperties putIfNonNegative(String key, long value) {
        if (value >= 0) {
            values.put(key, Long.toString(value));
        }
        return this;
    }

    public Map<String, String> freeze() {
        return Collections.unmodifiableMap(new LinkedHashMap<>(values));
    }

    /** Reads typed values back out of any info, whatever class loader loaded it. */
    public static final class Reader {
        private final ExternalResourceInfo info;
        private final String kind;

        public Reader(ExternalResourceInfo info, String kind) {
            if (info == null) {
                throw new IllegalArgumentException("Cannot read a " + kind + " from null");
            }
            this.info = info;
            this.kind = kind;
        }

        /**
         * Fails when the info says it is another kind of device (its {@code kind} property is
         * set and differs); an info without that property may be of any kind.
         */
        public Reader requireKind(String kindKey, String expected) {
            String actual = optional(kindKey);
            if (actual != null && !actual.equalsIgnoreCase(expected)) {
                throw new IllegalArgumentException(
                        "Not a "
                                + kind
                                + ": "
                                + describe()
                                + " describes a device of kind '"
                                + actual
                                + "' (property '"
                                + kindKey
                                + "'), expected '"
                                + expected
                                + "'");
            }
            return this;
        }

        public String required(String key) {
            Optional<String> v = property(key);
            if (v.isEmpty() || v.get().isBlank()) {
                throw new IllegalArgumentException(
                        "Not a "
                                + kind
                                + ": property '"
                                + key
                                + "' is missing from "
                                + describe()
                                + " (present keys: "
                                + info.getKeys()
                                + ")");
            }
            return v.get();
        }

        public String optional(String key) {
            return property(key).filter(s -> !s.isBlank()).orElse(null);
        }

        // A foreign implementation may break the contract and return null.
        private Optional<String> property(String key) {
            Optional<String> v = info.getProperty(key);
            return v == null ? Optional.empty() : v;
        }

        public long requiredLong(String key) {
            return parseLong(key, required(key));
        }

        public OptionalLong optionalLong(String key) {
            String v = optional(key);
            return v == null ? OptionalLong.empty() : OptionalLong.of(parseLong(key, v));
        }

        private long parseLong(String key, String v) {
            try {
                return Long.parseLong(v.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        "Not a "
                                + kind
                                + ": property '"
                                + key
                                + "' of "
                                + describe()
                                + " must be a whole number but is '"
                                + v
                                + "'");
            }
        }

        private String describe() {
            return info.getClass().getName();
        }
    }

    public static int toIntIndex(String kind, String key, long value) {
        if (value < 0 || value > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    kind + " property '" + key + "' must be between 0 and 2^31-1 but is " + value);
        }
        return (int) value;
    }
}
