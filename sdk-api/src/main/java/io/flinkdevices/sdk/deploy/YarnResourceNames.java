package io.flinkdevices.sdk.deploy;

import org.apache.flink.annotation.PublicEvolving;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Validation of Yarn resource type names, following Hadoop's {@code RESOURCE_NAME_PATTERN}: an
 * optional DNS-like prefix and {@code /}, then a name that starts with a letter and continues
 * with letters, digits, {@code _}, {@code .} or {@code -}. {@code memory-mb} and {@code vcores}
 * are Yarn's own and cannot be requested as device types.
 */
@PublicEvolving
public final class YarnResourceNames {

    private static final Pattern RESOURCE_NAME =
            Pattern.compile(
                    "^(((\\p{Alpha}([\\p{Alnum}-]*\\p{Alnum})?\\.)*"
                            + "\\p{Alpha}([\\p{Alnum}-]*\\p{Alnum})?)/)?\\p{Alpha}([\\w.-]*)$");

    private YarnResourceNames() {}

    /** Returns the reasons {@code name} is not a valid Yarn resource type name; empty if valid. */
    public static List<String> validate(String name) {
        if (name == null || name.isEmpty()) {
            return List.of("a Yarn resource name must not be empty");
        }
        if (name.equals("memory-mb") || name.equals("vcores") || name.equals("memory")) {
            return List.of(
                    "'" + name + "' is one of Yarn's built-in resources, not a device resource");
        }
        if (!RESOURCE_NAME.matcher(name).matches()) {
            return List.of(
                    "'"
                            + name
                            + "' is not a valid Yarn resource name: expected an optional"
                            + " 'prefix/' of DNS labels, then a letter followed by letters,"
                            + " digits, '_', '.' or '-' (as in 'yarn.io/gpu')");
        }
        return List.of();
    }
}
