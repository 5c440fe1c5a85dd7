package io.flinkdevices.sdk.archviolation;

import org.apache.flink.annotation.PublicEvolving;

import org.apache.commons.lang3.StringUtils;

/** Uses a library flink-core brings along, which a plugin class loader does not provide. */
@PublicEvolving
public final class CommonsLangLeak {
    /** Uses commons-lang3. */
    public static boolean blank(String s) {
        return StringUtils.isBlank(s);
    }
}
