package io.flinkdevices.sdk.reference;

import org.apache.flink.annotation.PublicEvolving;

import java.util.List;

/**
 * A driver factory that lists what an operator can set and see: every parameter it reads and
 * every metric its monitor publishes. The project's parameter and metric reference is generated
 * from these lists; a factory of a third-party driver implements it so that its own reference
 * page can be generated the same way.
 */
@PublicEvolving
public interface DocumentedDriver {

    /**
     * Every parameter the factory reads or declares, shared ones ({@code coordination.*}, {@code
     * monitor.*}, {@code health.*}) included, in the order a reference page shows them.
     */
    List<ParamDoc> parameters();

    /**
     * The metrics the driver's monitor publishes as live keys {@code metric.<name>}; empty (the
     * default) for a driver without a monitor.
     */
    default List<MetricDoc> metrics() {
        return List.of();
    }
}
