package io.flinkdevices.testkit.contract;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;

import java.util.Map;

/**
 * Creates a driver from its factory exactly the way a TaskManager does, for a driver's own tests:
 * Flink's {@code ExternalResourceUtils} hands the factory a {@link DelegatingConfiguration} view
 * of the whole configuration under {@code external-resource.<name>.param.}, so the driver reads
 * {@code tool.path} while its errors must name {@code external-resource.<name>.param.tool.path}
 * (the view's {@code toString()} and {@code DriverParams.fullKey} give the prefix back).
 *
 * <pre>{@code
 * ExternalResourceDriver driver = DriverFactories.create(
 *         new NpuDriverFactory(host.environment()), "npu", Map.of("tool.path", tool.toString()));
 * }</pre>
 *
 * <p>The contract kit creates every driver through {@link #configuration}.
 */
@PublicEvolving
public final class DriverFactories {

    private DriverFactories() {}

    /** The prefix Flink strips for resource {@code resourceName}: {@code external-resource.<name>.param.}. */
    public static String paramPrefix(String resourceName) {
        return "external-resource." + resourceName + ".param.";
    }

    /**
     * The configuration view a factory of resource {@code resourceName} is given when the
     * operator set {@code params} (keys without the prefix, as the driver reads them).
     */
    public static Configuration configuration(String resourceName, Map<String, String> params) {
        Configuration full = new Configuration();
        params.forEach((k, v) -> full.setString(paramPrefix(resourceName) + k, v));
        return new DelegatingConfiguration(full, paramPrefix(resourceName));
    }

    /**
     * {@code factory.createExternalResourceDriver} on the view of {@code params}, as a TaskManager
     * calls it for resource {@code resourceName}.
     *
     * @throws Exception what the factory throws (a {@code DriverConfigException} for a bad parameter)
     */
    public static ExternalResourceDriver create(
            ExternalResourceDriverFactory factory, String resourceName, Map<String, String> params) throws Exception {
        return factory.createExternalResourceDriver(configuration(resourceName, params));
    }
}
