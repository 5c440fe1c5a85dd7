package io.flinkdevices.sdk.deploy;

import org.apache.flink.annotation.PublicEvolving;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Validation of Yarn resource type names, following Hadoop's {@code
 * ResourceUtils.RESOURCE_NAME_PATTERN}: an optional prefix of dot-separated labels (letters,
 * digits and {@code -}, beginning and ending with a letter or digit) and {@code /}, then a name
 * that starts with a letter and continues with letters, digits, {@code _}, {@code .} or {@code
 * -}. {@code memory}, {@code memory-mb} and {@code vcores} are Yarn's own and cannot be defined as
 * device types. Amounts are positive whole numbers.
 */
@PublicEvolving
public final class YarnResourceNames {

    private static final Pattern RESOURCE_NAME =
            Pattern.compile(
                    "^(((\\p{Alnum}([\\p{Alnum}-]*\\p{Alnum})?\\.)*"
                            + "\\p{Alnum}([\\p{Alnum}-]*\\p{Alnum})?)/)?\\p{Alpha}([\\w.-]*)$");

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
                            + " 'prefix/' of dot-separated labels, then a letter followed by"
                            + " letters, digits, '_', '.' or '-' (as in 'yarn.io/gpu')");
        }
        return List.of();
    }

    /** Returns the reason {@code amount} is not a valid amount of resource {@code name}, if any. */
    public static List<String> validateAmount(String name, long amount) {
        if (amount < 1) {
            return List.of(
                    "the amount of Yarn resource '"
                            + name
                            + "' must be a positive whole number but is "
                            + amount);
        }
        return List.of();
    }
}
