package io.flinkdevices.job;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;

/** An info as a plugin's object looks to job code: only the interface, over a map a test may change. */
final class ForeignInfo {

    private ForeignInfo() {}

    static ExternalResourceInfo of(Map<String, String> props) {
        return new ExternalResourceInfo() {
            @Override
            public Optional<String> getProperty(String key) {
                return Optional.ofNullable(props.get(key));
            }

            @Override
            public Collection<String> getKeys() {
                return new ArrayList<>(props.keySet());
            }
        };
    }
}
