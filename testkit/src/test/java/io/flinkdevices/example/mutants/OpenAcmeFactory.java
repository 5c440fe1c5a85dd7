package io.flinkdevices.example.mutants;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.configuration.Configuration;

import java.util.Map;

/**
 * A planted bug of the mutation run: a factory that is not final and has no public no-argument
 * constructor, so Flink's ServiceLoader cannot create it.
 */
public class OpenAcmeFactory implements ExternalResourceDriverFactory {

    private final Map<String, String> environment;

    /** Only a constructor with an argument. */
    public OpenAcmeFactory(Map<String, String> environment) {
        this.environment = environment;
    }

    @Override
    public ExternalResourceDriver createExternalResourceDriver(Configuration config) {
        throw new UnsupportedOperationException("no driver for " + environment.size() + " variables");
    }
}
