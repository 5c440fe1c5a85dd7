package io.flinkdevices.sdk.config.internal;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * How an operator writes an enum constant in {@code config.yaml}: lower case with {@code -}
 * ({@code nvidia-smi} for {@code NVIDIA_SMI}), matched case-insensitively with {@code -} and
 * {@code _} equivalent.
 */
public final class EnumNames {

    private EnumNames() {}

    /** The constant of {@code type} that {@code value} names, if any. */
    public static <E extends Enum<E>> Optional<E> match(Class<E> type, String value) {
        String wanted = value.replace('-', '_').toUpperCase(Locale.ROOT);
        return Arrays.stream(type.getEnumConstants()).filter(e -> e.name().equals(wanted)).findFirst();
    }

    /** {@code expected one of a, b-c but got '<value>'}. */
    public static String expectedOneOf(Class<? extends Enum<?>> type, String value) {
        return "expected one of "
                + Arrays.stream(type.getEnumConstants())
                        .map(e -> e.name().toLowerCase(Locale.ROOT).replace('_', '-'))
                        .collect(Collectors.joining(", "))
                + " but got '"
                + value
                + "'";
    }
}
