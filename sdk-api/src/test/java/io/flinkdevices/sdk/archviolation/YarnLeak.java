package io.flinkdevices.sdk.archviolation;

import org.apache.flink.annotation.PublicEvolving;

import org.apache.hadoop.yarn.api.records.Resource;

/** Builds Yarn's own record instead of handing out a plain map. */
@PublicEvolving
public final class YarnLeak {
    /** Uses Hadoop. */
    public static int resources() {
        return Resource.touch();
    }
}
