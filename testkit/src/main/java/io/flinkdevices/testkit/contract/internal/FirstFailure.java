package io.flinkdevices.testkit.contract.internal;

import org.opentest4j.AssertionFailedError;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The first failure of a step that later cases of a kit build on (creating a driver for a healthy
 * host, retrieving exactly {@code amount} devices from it). The first case that meets it says what
 * is wrong; every later one says it follows from that case, so that one bug in a driver reads as
 * one bug, not as a page of count mismatches.
 */
public final class FirstFailure {

    private static final Map<Class<?>, String> FIRST = new ConcurrentHashMap<>();

    private FirstFailure() {}

    /** Forgets the failures of an earlier run of {@code kit}. */
    public static void reset(Class<?> kit) {
        FIRST.remove(kit);
    }

    /**
     * The failure to throw for {@code problem}, met by case {@code caseName} of {@code kit}: the
     * problem itself when it is the kit's first, else a pointer to the first.
     */
    public static AssertionError of(Class<?> kit, String caseName, String problem, Throwable cause) {
        String mine = "'" + caseName + "': " + problem;
        String first = FIRST.putIfAbsent(kit, mine);
        if (first == null || first.equals(mine)) {
            return new AssertionFailedError(problem, cause);
        }
        return new AssertionFailedError(
                "Follows from the first failure of this driver, in case "
                        + first
                        + " -- fix that first. Here: "
                        + problem,
                cause);
    }
}
