package io.flinkdevices.job.internal.lease;

import java.math.BigDecimal;
import java.util.concurrent.TimeUnit;

/** How amounts and waits read in messages. */
public final class Amounts {

    private Amounts() {}

    /** {@code 1 whole device}, {@code 2 whole devices}, {@code a 0.5 share of 1 device}. */
    public static String describe(int count, long shareMillionths) {
        if (shareMillionths == LeaseTable.WHOLE) {
            return count + (count == 1 ? " whole device" : " whole devices");
        }
        return "a " + share(shareMillionths) + " share of " + count + (count == 1 ? " device" : " devices");
    }

    /** A share in millionths as a plain decimal: {@code 0.5}, {@code 1}. */
    public static String share(long shareMillionths) {
        return BigDecimal.valueOf(shareMillionths, 6).stripTrailingZeros().toPlainString();
    }

    /** {@code 0 s}, {@code 10 s}, {@code 250 ms}. */
    public static String duration(long nanos) {
        if (nanos % TimeUnit.SECONDS.toNanos(1) == 0) {
            return TimeUnit.NANOSECONDS.toSeconds(nanos) + " s";
        }
        return TimeUnit.NANOSECONDS.toMillis(nanos) + " ms";
    }
}
