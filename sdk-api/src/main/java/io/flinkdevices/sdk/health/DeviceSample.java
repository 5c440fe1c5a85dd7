package io.flinkdevices.sdk.health;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What a {@link DeviceSampler} saw of one device at one moment: its health, the reason when it is
 * not {@code ok}, and numbers by metric name ({@code port_rcv_data}, {@code gpu_busy_percent}).
 * Immutable.
 */
@PublicEvolving
public final class DeviceSample {

    private final HealthState health;
    private final String reason;
    private final Map<String, Double> metrics;

    private DeviceSample(Builder b) {
        this.health = b.health;
        this.reason = b.reason;
        this.metrics = Collections.unmodifiableMap(new LinkedHashMap<>(b.metrics));
    }

    /** Starts a sample of a healthy device. */
    public static Builder builder() {
        return new Builder();
    }

    /** A sample of a failed device without metrics (it vanished, say). */
    public static DeviceSample failed(String reason) {
        return builder().health(HealthState.FAILED, reason).build();
    }

    /** The device's health. */
    public HealthState health() {
        return health;
    }

    /** One line saying what was seen; empty for {@code ok}. */
    public String reason() {
        return reason;
    }

    /** Numbers by metric name, in the order the sampler added them. */
    public Map<String, Double> metrics() {
        return metrics;
    }

    @Override
    public String toString() {
        return health.value() + (reason.isEmpty() ? "" : " (" + reason + ")") + " " + metrics;
    }

    /** Builds a {@link DeviceSample}. */
    @PublicEvolving
    public static final class Builder {
        private HealthState health = HealthState.OK;
        private String reason = "";
        private final Map<String, Double> metrics = new LinkedHashMap<>();

        private Builder() {}

        /**
         * The device's health and, unless it is {@code ok}, why: one line naming what was seen
         * ({@code port mlx5_0/1 state DOWN}). A worse health set earlier is kept, with its reason.
         */
        public Builder health(HealthState health, String reason) {
            Objects.requireNonNull(health, "health");
            if (health.compareTo(this.health) > 0) {
                this.health = health;
                this.reason = health == HealthState.OK ? "" : oneLine(reason);
            }
            return this;
        }

        /**
         * A number by its metric name: lower case, digits and {@code _} ({@code port_rcv_data}), as
         * the exporters operators already graph name it.
         *
         * @throws IllegalArgumentException for another name
         */
        public Builder metric(String name, double value) {
            if (name == null || !name.matches("[a-z][a-z0-9_]*")) {
                throw new IllegalArgumentException(
                        "a metric name must be lower case letters, digits and '_' (port_rcv_data) but is '" + name + "'");
            }
            metrics.put(name, value);
            return this;
        }

        /** Builds the sample. */
        public DeviceSample build() {
            return new DeviceSample(this);
        }

        private static String oneLine(String s) {
            if (s == null || s.isBlank()) {
                return "no reason given";
            }
            String l = s.strip().replaceAll("\\s*[\\r\\n]+\\s*", "; ");
            return l.length() > 300 ? l.substring(0, 300) + "..." : l;
        }
    }
}
