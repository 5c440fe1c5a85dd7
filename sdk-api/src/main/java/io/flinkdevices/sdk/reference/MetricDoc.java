package io.flinkdevices.sdk.reference;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Objects;

/**
 * One metric a driver's monitor publishes, as its reference page shows it: the name (the live key
 * is {@code metric.<name>}, the job-side gauge has the same name), where the number comes from and
 * its unit.
 */
@PublicEvolving
public final class MetricDoc {

    private final String name;
    private final String source;
    private final String unit;

    private MetricDoc(String name, String source, String unit) {
        this.name = TableCell.of(name, "name");
        this.source = TableCell.of(source, "source");
        this.unit = TableCell.of(unit, "unit");
    }

    /**
     * A documented metric.
     *
     * @param name the name after {@code metric.}, e.g. {@code gpu_temp}
     * @param source where the driver reads it: the library call, tool field or file
     * @param unit its unit as a reader of a dashboard needs it ({@code °C}, {@code MiB}, {@code
     *     percent}, {@code 1 = available, 0 = not})
     */
    public static MetricDoc of(String name, String source, String unit) {
        return new MetricDoc(name, source, unit);
    }

    /** The name after {@code metric.}. */
    public String name() {
        return name;
    }

    /** Where the driver reads the number. */
    public String source() {
        return source;
    }

    /** The number's unit. */
    public String unit() {
        return unit;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MetricDoc
                && name.equals(((MetricDoc) o).name)
                && source.equals(((MetricDoc) o).source)
                && unit.equals(((MetricDoc) o).unit);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, source, unit);
    }

    @Override
    public String toString() {
        return "metric." + name + " (" + unit + ") from " + source;
    }
}
