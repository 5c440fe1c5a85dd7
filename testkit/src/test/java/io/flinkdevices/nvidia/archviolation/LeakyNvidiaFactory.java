package io.flinkdevices.nvidia.archviolation;

import io.flinkdevices.amd.archviolation.AmdHelper;
import io.flinkdevices.testkit.fake.FakeHost;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.configuration.Configuration;

/**
 * Deliberately violating test fixture for {@code DriverArchitectureRulesTest}: a factory that is
 * not final, has no no-arg constructor, uses another driver and uses the testkit.
 */
public class LeakyNvidiaFactory implements ExternalResourceDriverFactory {

    private final String vendor;

    /** Not a no-arg constructor. */
    public LeakyNvidiaFactory(String vendor) {
        this.vendor = vendor + AmdHelper.vendor();
    }

    @Override
    public ExternalResourceDriver createExternalResourceDriver(Configuration config) {
        throw new UnsupportedOperationException(vendor + FakeHost.class.getSimpleName());
    }
}
