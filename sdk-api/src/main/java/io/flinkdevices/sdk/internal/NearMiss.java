package io.flinkdevices.sdk.internal;

import java.util.Collection;
import java.util.Locale;
import java.util.Optional;

/**
 * Finds the word an operator probably meant, by edit distance: the SDK's "did you mean" for
 * parameters, and the CLI's for Flink keys, resource and factory names.
 */
public final class NearMiss {

    private NearMiss() {}

    /**
     * The candidate closest to {@code word}, ignoring case, if it is at most {@code maxDistance}
     * edits away (insert, delete, replace, or swap two neighbours) and not {@code word} itself.
     */
    public static Optional<String> closest(
            String word, Collection<String> candidates, int maxDistance) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : candidates) {
            if (candidate.equals(word)) {
                continue;
            }
            int d = distance(word.toLowerCase(Locale.ROOT), candidate.toLowerCase(Locale.ROOT));
            if (d < bestDistance) {
                best = candidate;
                bestDistance = d;
            }
        }
        return bestDistance <= maxDistance ? Optional.ofNullable(best) : Optional.empty();
    }

    /** The optimal-string-alignment distance between {@code a} and {@code b}. */
    public static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] =
                        Math.min(
                                Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1
                        && j > 1
                        && a.charAt(i - 1) == b.charAt(j - 2)
                        && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
