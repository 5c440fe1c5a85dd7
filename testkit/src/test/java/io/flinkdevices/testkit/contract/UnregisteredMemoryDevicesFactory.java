package io.flinkdevices.testkit.contract;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.configuration.Configuration;

/** A correct factory nobody listed in META-INF/services: Flink would never find it. */
public final class UnregisteredMemoryDevicesFactory implements ExternalResourceDriverFactory {

    /** Creates the factory. */
    public UnregisteredMemoryDevicesFactory() {}

    @Override
    public ExternalResourceDriver createExternalResourceDriver(Configuration config)
            throws Exception {
        return new MemoryDevicesFactory().createExternalResourceDriver(config);
    }
}
