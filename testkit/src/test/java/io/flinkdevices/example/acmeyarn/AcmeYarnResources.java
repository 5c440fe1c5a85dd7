package io.flinkdevices.example.acmeyarn;

import io.flinkdevices.sdk.internal.ParamPrefix;

import org.apache.flink.configuration.Configuration;

import org.apache.hadoop.yarn.api.records.Resource;

/**
 * A planted bug of the mutation run: a helper of the Acme driver in a sibling package (beside
 * {@code io.flinkdevices.example.acme}, shipped in the same plugin jar) that uses a Hadoop class,
 * which a plugin never sees, and the SDK's internal {@code ParamPrefix}. An architecture test
 * that checks only the factory's package misses it.
 */
public final class AcmeYarnResources {

    private AcmeYarnResources() {}

    /** The Yarn vcores for {@code sticks} sticks, read the wrong way. */
    public static long vcores(Configuration config, long sticks) {
        return Resource.newInstance(sticks) + ParamPrefix.of(config).length();
    }
}
