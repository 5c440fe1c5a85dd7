package io.flinkdevices.testkit.contract;

import org.apache.flink.annotation.PublicEvolving;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One wrong driver parameter that the factory must reject, naming its full key {@code
 * external-resource.<resource>.param.<key>}. Applied on top of the parameters of a healthy host,
 * so that this parameter is the only thing wrong.
 *
 * <pre>{@code
 * List.of(BadParam.set("timeout", "soon"),
 *         BadParam.set("acme-smi.path", "/no/such/acme-smi"),
 *         BadParam.unset("device-file"))   // a required key
 * }</pre>
 */
@PublicEvolving
public final class BadParam {

    private final String key;
    private final String value;

    private BadParam(String key, String value) {
        if (key == null || key.isBlank()) {
            throw new IllegalArgumentException("A bad parameter needs a key");
        }
        this.key = key;
        this.value = value;
    }

    /** The parameter {@code key} set to the wrong {@code value}. */
    public static BadParam set(String key, String value) {
        return new BadParam(key, Objects.requireNonNull(value, "value"));
    }

    /** The required parameter {@code key} left out. */
    public static BadParam unset(String key) {
        return new BadParam(key, null);
    }

    /** The key, without the {@code external-resource.<resource>.param.} prefix. */
    public String key() {
        return key;
    }

    /** The wrong value; empty when the case is a missing required key. */
    public Optional<String> value() {
        return Optional.ofNullable(value);
    }

    /** {@code healthy} with this parameter made wrong. */
    public Map<String, String> applyTo(Map<String, String> healthy) {
        Map<String, String> params = new LinkedHashMap<>(healthy);
        if (value == null) {
            params.remove(key);
        } else {
            params.put(key, value);
        }
        return params;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof BadParam)) {
            return false;
        }
        BadParam b = (BadParam) o;
        return key.equals(b.key) && Objects.equals(value, b.value);
    }

    @Override
    public int hashCode() {
        return Objects.hash(key, value);
    }

    /** {@code key = 'value'} or {@code key unset}: the case's name in test reports. */
    @Override
    public String toString() {
        return value == null ? key + " unset" : key + " = '" + value + "'";
    }
}
