package io.flinkdevices.sdk.internal;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;

import java.lang.reflect.Field;

/**
 * Recovers the full key prefix ({@code external-resource.<name>.param.}) of the configuration view
 * Flink hands a driver factory.
 *
 * <p>Flink gives the factory a {@link DelegatingConfiguration} whose prefix is private; reading it
 * lets every error name the operator's real key. Where it cannot be read (a future Flink, a plain
 * {@link Configuration} in a test) the prefix is written with a {@code <resource>} placeholder.
 * {@code ParamPrefixTest} fails the day Flink renames the field.
 */
public final class ParamPrefix {

    public static final String UNKNOWN = "external-resource.<resource>.param.";

    private static final Field PREFIX_FIELD = findPrefixField();

    private ParamPrefix() {}

    public static String of(Configuration config) {
        if (config instanceof DelegatingConfiguration && PREFIX_FIELD != null) {
            try {
                Object prefix = PREFIX_FIELD.get(config);
                if (prefix instanceof String
                        && ((String) prefix).startsWith("external-resource.")) {
                    return (String) prefix;
                }
            } catch (IllegalAccessException | RuntimeException ignored) {
                // fall through to the placeholder
            }
        }
        return UNKNOWN;
    }

    /** Whether Flink's configuration view still has the field this class reads. */
    public static boolean canReadFlinkPrefix() {
        return PREFIX_FIELD != null;
    }

    private static Field findPrefixField() {
        try {
            Field f = DelegatingConfiguration.class.getDeclaredField("prefix");
            if (f.getType() != String.class) {
                return null;
            }
            f.setAccessible(true);
            return f;
        } catch (NoSuchFieldException | RuntimeException e) {
            return null;
        }
    }
}
