package io.flinkdevices.sdk.host.internal;

/**
 * The order of names in a sysfs folder as a person reads them: numbers by value, else by name
 * ({@code node2} before {@code node10}, {@code card02} beside {@code card2}).
 */
public final class NaturalOrder {

    private NaturalOrder() {}

    /** Compares {@code a} and {@code b}: digit runs by value, everything else by character. */
    public static int compare(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            char ca = a.charAt(i);
            char cb = b.charAt(j);
            if (Character.isDigit(ca) && Character.isDigit(cb)) {
                int si = i;
                int sj = j;
                while (i < a.length() && Character.isDigit(a.charAt(i))) {
                    i++;
                }
                while (j < b.length() && Character.isDigit(b.charAt(j))) {
                    j++;
                }
                String na = withoutLeadingZeros(a.substring(si, i));
                String nb = withoutLeadingZeros(b.substring(sj, j));
                int c = na.length() != nb.length() ? Integer.compare(na.length(), nb.length()) : na.compareTo(nb);
                if (c != 0) {
                    return c;
                }
            } else {
                if (ca != cb) {
                    return Character.compare(ca, cb);
                }
                i++;
                j++;
            }
        }
        int c = Integer.compare(a.length() - i, b.length() - j);
        return c != 0 ? c : a.compareTo(b);
    }

    private static String withoutLeadingZeros(String digits) {
        int k = 0;
        while (k < digits.length() - 1 && digits.charAt(k) == '0') {
            k++;
        }
        return digits.substring(k);
    }
}
