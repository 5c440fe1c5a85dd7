package io.flinkdevices.cli.render;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Kubernetes resource quantity ({@code k8s.io/apimachinery/pkg/api/resource.Quantity}) as far as
 * the CEL {@code quantity} library compares it: its exact numeric value.
 *
 * <p>{@code <sign><digits>[.<digits>]<suffix>}, the suffix binary ({@code Ki} to {@code Ei}),
 * decimal ({@code n u m k M G T P E}, none) or an exponent ({@code e3}, {@code E-2}). Like {@code
 * ParseQuantity}, a value finer than nano units is rounded up (away from zero) to the next nano
 * unit, and a binary-suffixed value is capped at 2^63-1. Stricter than Kubernetes in one corner: a
 * quantity without a digit ({@code "Gi"}, which Kubernetes reads as 0) is refused.
 */
record KubernetesQuantity(BigDecimal value) implements Comparable<KubernetesQuantity> {

    private static final Pattern FORM =
            Pattern.compile("([+-]?)([0-9]*(?:\\.[0-9]*)?)((?:[KMGTPE]i)|[numkMGTPE]?|[eE][+-]?[0-9]+)");
    private static final Map<String, Integer> BINARY =
            Map.of("Ki", 10, "Mi", 20, "Gi", 30, "Ti", 40, "Pi", 50, "Ei", 60);
    private static final Map<String, Integer> DECIMAL =
            Map.of("n", -9, "u", -6, "m", -3, "", 0, "k", 3, "M", 6, "G", 9, "T", 12, "P", 15, "E", 18);
    private static final BigDecimal MAX_BINARY = BigDecimal.valueOf(Long.MAX_VALUE);

    /**
     * @throws IllegalArgumentException naming {@code s} when it is no quantity
     */
    static KubernetesQuantity parse(String s) {
        Matcher m = FORM.matcher(s);
        if (!m.matches() || !m.group(2).matches(".*[0-9].*")) {
            throw new IllegalArgumentException(
                    "'" + s + "' is no quantity: expected digits, an optional fraction and a suffix such as Gi, G or e3");
        }
        String number = m.group(2).endsWith(".") ? m.group(2) + "0" : m.group(2);
        BigDecimal amount = new BigDecimal(number.startsWith(".") ? "0" + number : number);
        String suffix = m.group(3);
        boolean binary = BINARY.containsKey(suffix);
        if (binary) {
            amount = amount.multiply(BigDecimal.valueOf(2).pow(BINARY.get(suffix)));
        } else if (DECIMAL.containsKey(suffix)) {
            amount = amount.scaleByPowerOfTen(DECIMAL.get(suffix));
        } else {
            amount = amount.scaleByPowerOfTen(Integer.parseInt(suffix.substring(1)));
        }
        if (amount.scale() > 9) {
            amount = amount.setScale(9, RoundingMode.UP);
        }
        if (binary && amount.compareTo(MAX_BINARY) > 0) {
            amount = MAX_BINARY;
        }
        return new KubernetesQuantity("-".equals(m.group(1)) ? amount.negate() : amount);
    }

    /** -1, 0 or 1 as this quantity's value is less than, equal to or greater than {@code other}'s. */
    @Override
    public int compareTo(KubernetesQuantity other) {
        return value.compareTo(other.value);
    }
}
