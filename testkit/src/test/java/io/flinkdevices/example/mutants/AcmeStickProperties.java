package io.flinkdevices.example.mutants;

import io.flinkdevices.sdk.internal.InfoProperties;

import java.util.Map;

/**
 * A planted bug of the mutation run: an info's properties built with the SDK's internal {@code
 * InfoProperties}, which may change in any release and break the plugin.
 */
public final class AcmeStickProperties {

    private AcmeStickProperties() {}

    /** The properties of stick {@code index}. */
    public static Map<String, String> of(int index, String uuid) {
        return new InfoProperties().put("index", index).put("uuid", uuid).freeze();
    }
}
